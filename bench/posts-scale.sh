#!/usr/bin/env bash
# Grows the running suite's posts to POSTS (default 100,000) fast, for the scale benchmark:
# copies of the published posts already there (the reference seeder's, about 600 words each)
# under new ids, titles and slugs, published at random times over the past year, written in
# one statement with their slugs and the lists' totals, then `postly-posts republish`, so search
# and comments learn of them through the events as of any post. Then EXPLAIN ANALYZE of the
# hot reads at that size.
#   bench/posts-scale.sh                   POSTS (100000); POSTLY_POSTGRES_PORT, POSTLY_RUN_DIR as for up.sh;
#                                          REPUBLISH=0 skips the republish (for the EXPLAINs alone:
#                                          search and comments then never learn of the copies)
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
  SELECT 'post', new_id, new_id, author_id, 'public', true, at FROM added ORDER BY at;
COMMIT;
ANALYZE posts;
SQL
  echo "written in ${SECONDS} s" >&2
  if [ "${REPUBLISH:-1}" != 0 ]; then
    echo "republishing every post for search and comments" >&2
    SECONDS=0
    env POSTGRES_HOST=127.0.0.1 POSTGRES_PORT="$port" POSTGRES_USER=postgres POSTGRES_DATABASE=postly_posts \
      KAFKA_BROKERS="127.0.0.1:${POSTLY_BROKER_PORT:-9092}" LOG_LEVEL=warning \
      "$postly_root/.build/release/postly-posts" republish >&2
    echo "republished in ${SECONDS} s" >&2
  fi
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

# Posts over time (issue 26): the change feed's, the RSS and Atom feeds' and the scheduler's
# statements, as posts' ChangeFeed, ChangeLog, PostgresPostRepository.feed and publishDue send them.
in_rollback() { echo "--- $1"; posts_sql -tA <<<"BEGIN; EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON) $2; ROLLBACK;" | grep -E 'Scan|Limit|Sort|Aggregate|Execution Time'; }
changes_page() {  # after (txid, seq), anonymous, 100 entries
  echo "SELECT c.kind, c.id, c.post_id, c.author_id, c.visibility, c.ever_public, c.txid::text AS txid, c.seq, c.changed_at
        FROM changes c LEFT JOIN changes p ON c.kind = 'comment' AND p.kind = 'post' AND p.id = c.post_id
        WHERE (c.txid, c.seq) > $1 AND c.txid < pg_snapshot_xmin(pg_current_snapshot())
          AND CASE c.kind WHEN 'post' THEN c.visibility = 'public' OR c.ever_public OR c.author_id = NULL
              WHEN 'comment' THEN p.visibility = 'public' OR (p.visibility = 'private' AND p.author_id = NULL) ELSE true END
        ORDER BY c.txid, c.seq LIMIT 100"
}
middle=$(posts_sql -tAc "SELECT format('(%L::xid8, %s)', txid, seq) FROM changes ORDER BY txid, seq OFFSET (SELECT count(*) / 2 FROM changes) LIMIT 1")
ids=$(posts_sql -tAc "SELECT array_agg(id)::text FROM (SELECT id FROM posts WHERE status = 'published' ORDER BY random() LIMIT 100) s")
authors=$(posts_sql -tAc "SELECT array_agg(DISTINCT author_id)::text FROM (SELECT author_id FROM posts WHERE status = 'published' ORDER BY published_at DESC LIMIT 20) s")
post=$(posts_sql -tAc "SELECT id FROM posts WHERE status = 'published' ORDER BY random() LIMIT 1")
posts_sql -tAc "SELECT 'changes: ' || count(*) || ', comments among them: ' || count(*) FILTER (WHERE kind = 'comment') FROM changes"
explain "the change feed's first page (a resync)" "$(changes_page "('0'::xid8, 0)")"
explain "a change feed page from the middle" "$(changes_page "$middle")"
explain "the change feed's last page" "$(changes_page "(pg_snapshot_xmin(pg_current_snapshot()), 0)")"
explain "the change feed's frontier (since=now)" "SELECT txid::text AS last_txid, seq FROM changes WHERE txid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY txid DESC, seq DESC LIMIT 1"
explain "a page's 100 posts" "SELECT p.id, p.title, p.content, p.content_html, COALESCE(u.name, p.author_name) FROM posts p LEFT JOIN users u ON u.user_id = p.author_id WHERE p.id = ANY('$ids'::text[])"
explain "the start's restore check" "SELECT EXISTS (SELECT 1 FROM changes WHERE txid >= pg_current_xact_id()) AS restored"
in_rollback "a post's log entry (ChangeLog)" "INSERT INTO changes (kind, id, post_id, author_id, visibility, ever_public) VALUES ('post', '$post', '$post', '$author', 'public', true) ON CONFLICT (kind, id) DO UPDATE SET visibility = EXCLUDED.visibility, txid = pg_current_xact_id(), seq = nextval('changes_seq'), changed_at = now()"
in_rollback "a deleted post's comments leave the log" "DELETE FROM changes WHERE kind = 'comment' AND post_id = '$post'"
in_rollback "the hourly purge of tombstones" "DELETE FROM changes WHERE visibility = 'gone' AND changed_at < now() - interval '30 days'"
explain "the site feed's 20 posts" "SELECT id FROM posts WHERE status = 'published' ORDER BY published_at DESC, created_at DESC, id DESC LIMIT 20 OFFSET 0"
explain "an author feed's 20 posts" "SELECT id FROM posts WHERE author_id = '$author' AND status = 'published' ORDER BY published_at DESC, created_at DESC, id DESC LIMIT 20 OFFSET 0"
explain "a feed's shown posts and authors, last changed" "SELECT max(changed_at) FROM changes WHERE (kind = 'post' AND id = ANY('$ids'::text[])) OR (kind = 'author' AND id = ANY('$authors'::text[]))"
explain "the site feed's last post that left it" "SELECT max(changed_at) FROM changes WHERE kind = 'post' AND ever_public AND visibility <> 'public'"
explain "an author feed's last post that left it" "SELECT max(changed_at) FROM changes WHERE kind = 'post' AND ever_public AND visibility <> 'public' AND author_id = '$author'"
explain "the scheduler's next due time" "SELECT min(publish_at) AS next FROM posts WHERE status = 'scheduled'"
in_rollback "the scheduler's claim of 100 due posts" "SELECT id FROM posts WHERE status = 'scheduled' AND publish_at <= now() ORDER BY publish_at, id LIMIT 100 FOR UPDATE SKIP LOCKED"
