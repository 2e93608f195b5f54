SELECT p.id, p.title, p.content, p.content_html, p.excerpt, p.slug, p.status, p.cover_image, p.author_id,
       COALESCE(u.name, p.author_name) AS author_name, u.profile_picture AS author_picture, p.read_time,
       p.views, p.likes, p.comments_count, p.created_at, p.updated_at, p.published_at, p.version, p.event_sequence
FROM posts p LEFT JOIN users u ON u.user_id = p.author_id WHERE p.id = :id;
