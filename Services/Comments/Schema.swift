import PostlyEvents
import PostlyPostgres

/// The comments service's tables: the outbox (version 1), then its own, the write unit's
/// (3) and the shared users projection (4).
let schema = Migrations([
    Outbox.migration,
    Migration(
        version: 2, name: "comments",
        sql: """
            -- What the service knows of posts, from post.created/updated/deleted. A deleted
            -- post stays as a tombstone so that an older event cannot bring it back.
            CREATE TABLE posts (
                id text PRIMARY KEY,
                author_id text NOT NULL,
                title text NOT NULL,
                status text NOT NULL,
                deleted boolean NOT NULL DEFAULT false,
                sequence bigint NOT NULL
            );
            -- (Version 2 created the users projection's table here; version 4 does now.)
            CREATE TABLE comments (
                position bigserial UNIQUE,
                id text PRIMARY KEY,
                post_id text NOT NULL,
                content text NOT NULL,
                author_id text NOT NULL,
                author_name text NOT NULL,
                author_picture text,
                created_at timestamptz NOT NULL
            );
            CREATE INDEX comments_by_post ON comments (post_id, created_at, position);
            CREATE INDEX comments_by_author ON comments (author_id);
            -- The sequence of each post's comment events; its row lock also orders a new
            -- comment against the post's deletion.
            CREATE TABLE comment_event_sequences (
                post_id text PRIMARY KEY,
                sequence bigint NOT NULL
            );
            -- Idempotency-Key of POST .../comments: the first answer, per user and key, 24 h.
            CREATE TABLE idempotency_keys (
                user_id text NOT NULL,
                key text NOT NULL,
                post_id text NOT NULL,
                content text NOT NULL,
                response text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, key)
            );
            """),
    WriteUnit.migration(version: 3),
    UsersProjection.migration(version: 4),
    Migration(
        version: 5, name: "events through the write unit",
        sql: """
            INSERT INTO event_sequences (topic, key, sequence)
            SELECT 'postly.comments', post_id, sequence FROM comment_event_sequences;
            DROP TABLE comment_event_sequences;
            -- Keys of the old design simply expire.
            DROP TABLE idempotency_keys;
            """),
    Migration(
        version: 6, name: "import ledger",
        sql: """
            -- The comments an import may not create: every one it created, whatever became of it
            -- since (a second run brings back no comment deleted), and every one there was when
            -- the ledger began.
            CREATE TABLE imported_comments (id text PRIMARY KEY);
            INSERT INTO imported_comments (id) SELECT id FROM comments;
            """),
    Migration(
        version: 7, name: "comments ordered as posts embed them",
        sql: """
            -- Comments of the same millisecond (imported ones, mostly) in id order, as the posts
            -- service embeds them in a post: the list and the post agree.
            CREATE INDEX comments_by_post_in_order ON comments (post_id, created_at, id);
            DROP INDEX comments_by_post;
            """),
])
