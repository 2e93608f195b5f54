#!/usr/bin/env bash
# Grows the running suite's posts to POSTS (default 100,000) fast, for the scale benchmark:
# copies of the published posts already there (the reference seeder's, about 600 words each)
# under new ids, titles and slugs, published at random times over the past year, written in
# one statement with their slugs and the lists' totals, then `postly-posts republish`, so search
# and comments learn of them through the events as of any post. Then EXPLAIN ANALYZE of the
# hot reads at that size.
#   bench/posts-scale.sh                   POSTS (100000); POSTLY_POSTGRES_PORT, POSTLY_RUN_DIR as for up.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
port=${POSTLY_POSTGRES_PORT:-5433}
run=${POSTLY_RUN_DIR:-$postly_root/.run}
want=${POSTS:-100000}
posts_sql() { "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postly_posts -v ON_ERROR_STOP=1 -P pager=off "$@"; }

have=$(posts_sql -tAc "SELECT count(*) FROM posts")
add=$((want - have))
if [ "$add" -gt 0 ]; then
  echo "adding $add posts to $have" >&2
  SECONDS=0
  posts_sql -q <<SQL
BEGIN;
CREATE TEMP TABLE template AS
  SELECT row_number() OVER (ORDER BY id) - 1 AS n, * FROM posts WHERE status = 'published' AND title NOT LIKE '% (copy %';
CREATE TEMP TABLE added AS
  SELECT gen_random_uuid()::text AS new_id, g, t.*, now() - random() * interval '365 days' AS at
  FROM generate_series(1, $add) g JOIN template t ON t.n = g % (SELECT count(*) FROM template);
INSERT INTO posts (id, title, content, content_html, rendered_by, excerpt, slug, status, cover_image, author_id,
                   author_name, read_time, views, likes, created_at, updated_at, published_at, version)
  SELECT new_id, left(title, 180) || ' (copy ' || g || ')', content, content_html, rendered_by, excerpt,
         left(slug, 60) || '-copy-' || g || '-' || left(new_id, 8), 'published', cover_image, author_id, author_name,
         read_time, 0, 0, at, at, at, 1
  FROM added;
INSERT INTO slugs (slug, post_id) SELECT slug, id FROM posts WHERE id IN (SELECT new_id FROM added);
INSERT INTO post_totals (author_id, status, slot, posts)
  SELECT author_id, 'published', 0, count(*) FROM added GROUP BY author_id
  UNION ALL SELECT '', 'published', 0, count(*) FROM added
  ON CONFLICT (author_id, status, slot) DO UPDATE SET posts = post_totals.posts + excluded.posts;
-- The change feed's log (posts' ChangeLog), as the service's writes keep it.
INSERT INTO changes (kind, id, post_id, author_id, visibility, ever_public, changed_at)
  SELECT 'post', id, id, author_id, 'public', true, at FROM added ORDER BY at;
COMMIT;
ANALYZE posts;
SQL
  echo "written in ${SECONDS} s; republishing every post for search and comments" >&2
  SECONDS=0
  env POSTGRES_HOST=127.0.0.1 POSTGRES_PORT="$port" POSTGRES_USER=postgres POSTGRES_DATABASE=postly_posts \
    KAFKA_BROKERS="127.0.0.1:${POSTLY_BROKER_PORT:-9092}" LOG_LEVEL=warning \
    "$postly_root/.build/release/postly-posts" republish >&2
  echo "republished in ${SECONDS} s" >&2
  # The rows bypassed the service's writes: every instance's read model drops what it holds.
  posts_sql -qtAc "SELECT pg_notify('postly_posts_read_model', 'posts-scale' || chr(10) || '*')" >/dev/null
fi

author=$(posts_sql -tAc "SELECT author_id FROM posts GROUP BY author_id ORDER BY count(*) DESC LIMIT 1")
posts_sql -tAc "SELECT 'posts: ' || count(*) || ', published: ' || count(*) FILTER (WHERE status = 'published') FROM posts"
explain() { echo "--- $1"; posts_sql -tAc "EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON) $2" | grep -E 'Scan|Limit|Sort|Aggregate|Execution Time'; }
explain "the feed's page" "SELECT id FROM posts WHERE status = 'published' ORDER BY published_at DESC, created_at DESC, id DESC LIMIT 10 OFFSET 0"
explain "the feed's total" "SELECT COALESCE(sum(posts), 0)::bigint AS total FROM post_totals WHERE author_id = '' AND status = 'published'"
explain "an author's page" "SELECT id FROM posts WHERE author_id = '$author' AND status = 'published' ORDER BY published_at DESC, created_at DESC, id DESC LIMIT 10 OFFSET 0"
explain "an author's posts, any status" "SELECT id FROM posts WHERE author_id = '$author' ORDER BY published_at DESC, created_at DESC, id DESC LIMIT 10 OFFSET 0"
explain "an author's total, any status" "SELECT COALESCE(sum(posts), 0)::bigint AS total FROM post_totals WHERE author_id = '$author'"
explain "the count a total replaces" "SELECT count(*) FROM posts WHERE status = 'published'"
