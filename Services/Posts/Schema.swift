import PostlyEvents
import PostlyPostgres

/// The posts service's tables, in order. Version 1 is the outbox every publisher has, 3 the
/// write unit's tables, 4 the shared users projection, 7 the lists' totals, 8 scheduled posts, 9
/// the change feed's log, 10 the authors an import merged, 14 the site feed's Last-Modified,
/// 15 the slugs' suffixes.
let schema = Migrations([
    Outbox.migration,
    Migration(
        version: 2, name: "posts",
        sql: """
            CREATE TABLE posts (
                id text PRIMARY KEY,
                title text NOT NULL,
                content text NOT NULL,
                content_html text NOT NULL,
                excerpt text NOT NULL,
                slug text NOT NULL UNIQUE,
                status text NOT NULL CHECK (status IN ('published', 'draft')),
                cover_image text,
                author_id text NOT NULL,
                -- The token's name at write time: shown until the users projection knows better
                -- (version 2 created the projection's table here; version 4 does now).
                author_name text NOT NULL,
                read_time integer NOT NULL,
                views bigint NOT NULL DEFAULT 0,
                likes integer NOT NULL DEFAULT 0,
                comments_count integer NOT NULL DEFAULT 0,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                published_at timestamptz,
                version integer NOT NULL DEFAULT 1,
                -- The `sequence` of the post's last event: every event of the post adds one.
                event_sequence bigint NOT NULL DEFAULT 1
            );
            CREATE INDEX posts_feed ON posts (status, published_at DESC, created_at DESC, id DESC);
            CREATE INDEX posts_author ON posts (author_id, status, published_at DESC, created_at DESC);
            -- Every slug a post ever had, current and former: one table, one unique key, so a
            -- new post can take neither another's slug nor another's old one.
            CREATE TABLE slugs (
                slug text PRIMARY KEY,
                -- Deferred: a slug is claimed before its post's row is written.
                post_id text NOT NULL REFERENCES posts (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
            );
            CREATE INDEX slugs_post ON slugs (post_id);
            CREATE TABLE likes (
                post_id text NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
                user_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (post_id, user_id)
            );
            -- The comments shown inside posts, a projection of comment.created / comment.deleted.
            CREATE TABLE comments (
                id text PRIMARY KEY,
                post_id text NOT NULL,
                content text NOT NULL,
                author_id text NOT NULL,
                author_name text NOT NULL,
                author_picture text,
                created_at timestamptz NOT NULL
            );
            CREATE INDEX comments_post ON comments (post_id, created_at, id);
            CREATE TABLE idempotency_keys (
                user_id text NOT NULL,
                key text NOT NULL,
                request text NOT NULL,
                post_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (user_id, key)
            );
            """),
    WriteUnit.migration(version: 3),
    UsersProjection.migration(version: 4),
    Migration(
        version: 5, name: "events through the write unit",
        sql: """
            -- Sequences move to the write unit's table; the comment counter goes (counted on read).
            INSERT INTO event_sequences (topic, key, sequence) SELECT 'postly.posts', id, event_sequence FROM posts;
            ALTER TABLE posts DROP COLUMN event_sequence, DROP COLUMN comments_count;
            -- Keys of the old design simply expire: retries within their 24 hours create again.
            DROP TABLE idempotency_keys;
            """),
    Migration(
        version: 6, name: "renderer of the stored HTML",
        sql: """
            -- Which renderer made content_html (Markdown.renderer): rerender skips posts the current one made.
            ALTER TABLE posts ADD COLUMN rendered_by text;
            """),
    Migration(
        version: 7, name: "totals kept by the writes",
        sql: """
            -- How many posts each list holds, kept by the writes in their own transaction so no
            -- read counts posts: author_id '' is every author (the feed), else one author's.
            -- A write adds to one of 16 slots, so concurrent writes to one list do not wait for
            -- each other's commit; a total is the sum of at most 16 rows.
            CREATE TABLE post_totals (
                author_id text NOT NULL,
                status text NOT NULL,
                slot smallint NOT NULL,
                posts bigint NOT NULL,
                PRIMARY KEY (author_id, status, slot)
            );
            INSERT INTO post_totals (author_id, status, slot, posts)
                SELECT '', status, 0, count(*) FROM posts GROUP BY status
                UNION ALL SELECT author_id, status, 0, count(*) FROM posts GROUP BY author_id, status;
            -- Each list's page in index order: an author's posts of one status, and of any status.
            DROP INDEX posts_author;
            CREATE INDEX posts_author ON posts (author_id, status, published_at DESC, created_at DESC, id DESC);
            CREATE INDEX posts_author_any_status ON posts (author_id, published_at DESC, created_at DESC, id DESC);
            """),
    Migration(
        version: 8, name: "scheduled posts",
        sql: """
            -- A scheduled post is published by the scheduler (PostScheduler) at publish_at.
            ALTER TABLE posts DROP CONSTRAINT posts_status_check,
                ADD CONSTRAINT posts_status_check CHECK (status IN ('published', 'draft', 'scheduled')),
                ADD COLUMN publish_at timestamptz,
                ADD CONSTRAINT posts_publish_at_only_scheduled CHECK ((status = 'scheduled') = (publish_at IS NOT NULL));
            -- The scheduler's queue: only the scheduled posts, in the order they fall due.
            CREATE INDEX posts_due ON posts (publish_at, id) WHERE status = 'scheduled';
            """),
    Migration(
        version: 9, name: "change feed",
        sql: """
            -- Each post, comment and author once, at its last change (ChangeLog), in the order of the
            -- transactions that wrote them: (txid, seq).
            CREATE SEQUENCE changes_seq;
            CREATE TABLE changes (
                kind text NOT NULL CHECK (kind IN ('post', 'comment', 'author')),
                id text NOT NULL,
                -- A comment's post: the post's visibility decides the comment's.
                post_id text,
                author_id text NOT NULL,
                visibility text NOT NULL CHECK (visibility IN ('public', 'private', 'gone')),
                ever_public boolean NOT NULL DEFAULT false,
                txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                seq bigint NOT NULL DEFAULT nextval('changes_seq'),
                changed_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (kind, id)
            );
            CREATE INDEX changes_order ON changes (txid, seq);
            CREATE INDEX changes_tombstones ON changes (changed_at) WHERE visibility = 'gone';
            -- Posts that left the public lists: when the RSS and Atom feeds last changed.
            CREATE INDEX changes_left ON changes (author_id, changed_at) WHERE kind = 'post' AND visibility <> 'public' AND ever_public;
            -- One row: the cursors' epoch, and the position of the last tombstone purged.
            CREATE TABLE changes_meta (epoch text NOT NULL, horizon_txid xid8 NOT NULL DEFAULT '0', horizon_seq bigint NOT NULL DEFAULT 0);
            INSERT INTO changes_meta (epoch) VALUES (md5(random()::text || clock_timestamp()::text));
            -- What exists already, as of this transaction.
            INSERT INTO changes (kind, id, post_id, author_id, visibility, ever_public, changed_at)
                SELECT 'post', id, id, author_id, CASE WHEN status = 'published' THEN 'public' ELSE 'private' END,
                       status = 'published', updated_at
                FROM posts ORDER BY updated_at, id;
            INSERT INTO changes (kind, id, post_id, author_id, visibility, ever_public, changed_at)
                SELECT 'comment', id, post_id, author_id, 'public', true, created_at FROM comments ORDER BY created_at, id;
            INSERT INTO changes (kind, id, author_id, visibility, ever_public)
                SELECT 'author', user_id, user_id, 'public', true FROM users ORDER BY user_id;
            """),
    Migration(
        version: 10, name: "author aliases",
        sql: """
            -- Users an import merged into another (one email, two accounts in the earlier deployment):
            -- their posts are the survivor's, and their old id still lists them.
            CREATE TABLE author_aliases (from_id text PRIMARY KEY, to_id text NOT NULL);
            """),
    Migration(
        version: 11, name: "change feed: a post's comments",
        sql: """
            -- A deleted post's comments leave the log with it (ChangeLog.post): found by their post,
            -- not by reading the whole log.
            CREATE INDEX changes_comments ON changes (post_id) WHERE kind = 'comment';
            """),
    Migration(
        version: 12, name: "import ledger",
        sql: """
            -- The posts and likes an import may not create: every one it created, whatever became
            -- of it since (a second run brings back no post deleted and no like taken back; a
            -- deleted post's change-feed tombstone is purged after CHANGES_TOMBSTONE_DAYS), and
            -- every one there was when the ledger began.
            CREATE TABLE imported_posts (id text PRIMARY KEY);
            CREATE TABLE imported_likes (post_id text NOT NULL, user_id text NOT NULL, PRIMARY KEY (post_id, user_id));
            INSERT INTO imported_posts (id) SELECT id FROM posts UNION SELECT id FROM changes WHERE kind = 'post';
            INSERT INTO imported_likes (post_id, user_id) SELECT post_id, user_id FROM likes;
            """),
    Migration(
        version: 13, name: "an author's posts newest first",
        sql: """
            -- An author's own list of any status, newest created first, as the earlier backend
            -- listed it; by publication every draft came first, however old.
            DROP INDEX posts_author_any_status;
            CREATE INDEX posts_author_any_status ON posts (author_id, created_at DESC, id DESC);
            """),
    Migration(
        version: 14, name: "posts that left the site's feed",
        sql: """
            -- The site feed's Last-Modified counts the newest post that left it: one index entry,
            -- where changes_left (by author) had every such post read.
            CREATE INDEX changes_left_site ON changes (changed_at) WHERE kind = 'post' AND visibility <> 'public' AND ever_public;
            """),
    Migration(
        version: 15, name: "slug suffixes",
        sql: """
            -- The last suffix handed out for each slug taken (`claimSlug`), begun with the largest
            -- the slugs hold: a post's slug costs a few statements however many share its title.
            CREATE TABLE slug_suffixes (base text PRIMARY KEY, last integer NOT NULL);
            INSERT INTO slug_suffixes (base, last)
            SELECT substring(slug FROM '^(.+)-[0-9]{1,9}$'), max(substring(slug FROM '-([0-9]{1,9})$')::integer)
            FROM slugs WHERE slug ~ '^.+-[0-9]{1,9}$' GROUP BY 1;
            """),
    Migration(
        version: 16, name: "authors with something public",
        sql: """
            -- The change feed shows an author's row to others once they have written something
            -- public: one index entry per row, however many accounts there are.
            CREATE INDEX changes_public_authors ON changes (author_id) WHERE kind IN ('post', 'comment') AND ever_public;
            """),
    Migration(
        version: 17, name: "change feed purges",
        sql: """
            -- How many purges deleted tombstones: a cursor given out since the last one missed
            -- none, even before the horizon (a resync's pages, a quiet log's frontier).
            ALTER TABLE changes_meta ADD COLUMN purges bigint NOT NULL DEFAULT 0;
            """),
])
