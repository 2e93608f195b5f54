import PostlyEvents
import PostlyPostgres

/// The notifications service's tables: the consumed sequences (version 1, with the unused
/// outbox of the shared events migration), the users projection (actors' names and
/// pictures), then its own.
let schema = Migrations([
    Outbox.migration,
    UsersProjection.migration(version: 2),
    Migration(
        version: 3, name: "notifications",
        sql: """
            -- Posts whose post.deleted arrived: a late like or comment of them notifies nobody.
            CREATE TABLE deleted_posts (
                post_id text PRIMARY KEY
            );
            -- `position` grows in commit order (inserts hold the `notifications` advisory lock
            -- until commit), so "everything after this one" is exact for Last-Event-ID.
            -- A removed notification stays as a tombstone: its position still anchors a replay,
            -- and a redelivered event cannot bring it back.
            CREATE TABLE notifications (
                position bigserial UNIQUE,
                id text PRIMARY KEY,
                recipient_id text NOT NULL,
                type text NOT NULL,
                actor_id text NOT NULL,
                actor_name text NOT NULL,
                actor_picture text,
                post_id text NOT NULL,
                post_title text NOT NULL,
                comment_id text,
                created_at timestamptz NOT NULL,
                read_at timestamptz,
                removed boolean NOT NULL DEFAULT false
            );
            -- Like, unlike, like again: one notification.
            CREATE UNIQUE INDEX notifications_one_per_like ON notifications (post_id, actor_id) WHERE type = 'post.liked';
            CREATE UNIQUE INDEX notifications_one_per_comment ON notifications (comment_id) WHERE comment_id IS NOT NULL;
            CREATE INDEX notifications_by_recipient ON notifications (recipient_id, created_at DESC, position DESC) WHERE NOT removed;
            CREATE INDEX notifications_replay ON notifications (recipient_id, position) WHERE NOT removed;
            CREATE INDEX notifications_unread ON notifications (recipient_id) WHERE read_at IS NULL AND NOT removed;
            CREATE INDEX notifications_by_post ON notifications (post_id);
            -- Tickets for EventSource clients, which cannot send Authorization: only their
            -- SHA-256 is stored; each is spent by its first use.
            CREATE TABLE stream_tickets (
                hash bytea PRIMARY KEY,
                user_id text NOT NULL,
                session_id text NOT NULL,
                expires_at timestamptz NOT NULL
            );
            CREATE INDEX stream_tickets_by_expiry ON stream_tickets (expires_at);
            """),
    Migration(
        version: 4, name: "a ticket's stream ends with its token",
        sql: """
            -- When the access token that asked for the ticket expires: the stream ends then.
            ALTER TABLE stream_tickets ADD COLUMN access_expires_at timestamptz;
            """),
    OpenStreams.migration,
    Migration(
        version: 6, name: "notification counts",
        sql: """
            -- Each recipient's notifications and unread ones, kept as the notifications change, so
            -- a page costs the same however many a user has (it counted them all on each read).
            -- Kept by a trigger, so every writer keeps them, an instance of an older release
            -- during a rolling update included. Per statement: marking hundreds read moves the
            -- counts once.
            CREATE TABLE notification_counts (
                recipient_id text PRIMARY KEY,
                total integer NOT NULL,
                unread integer NOT NULL
            );
            CREATE FUNCTION count_notifications() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO notification_counts AS c (recipient_id, total, unread)
                    SELECT recipient_id, count(*), count(*) FILTER (WHERE read_at IS NULL)
                    FROM added WHERE NOT removed GROUP BY recipient_id
                    ON CONFLICT (recipient_id) DO UPDATE SET total = c.total + excluded.total, unread = c.unread + excluded.unread;
                ELSE
                    INSERT INTO notification_counts AS c (recipient_id, total, unread)
                    SELECT recipient_id, sum(total), sum(unread) FROM (
                        SELECT recipient_id, 1 AS total, (read_at IS NULL)::integer AS unread FROM changed WHERE NOT removed
                        UNION ALL
                        SELECT recipient_id, -1, -(read_at IS NULL)::integer FROM was WHERE NOT removed
                    ) AS change
                    GROUP BY recipient_id HAVING sum(total) <> 0 OR sum(unread) <> 0
                    ON CONFLICT (recipient_id) DO UPDATE SET total = c.total + excluded.total, unread = c.unread + excluded.unread;
                END IF;
                RETURN NULL;
            END
            $$;
            CREATE TRIGGER count_added AFTER INSERT ON notifications
                REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION count_notifications();
            CREATE TRIGGER count_changed AFTER UPDATE ON notifications
                REFERENCING OLD TABLE AS was NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_notifications();
            INSERT INTO notification_counts (recipient_id, total, unread)
            SELECT recipient_id, count(*), count(*) FILTER (WHERE read_at IS NULL) FROM notifications WHERE NOT removed GROUP BY recipient_id;
            -- The unread page in its order (the index of unread ones served the count alone).
            CREATE INDEX notifications_unread_by_recipient ON notifications (recipient_id, created_at DESC, position DESC)
                WHERE read_at IS NULL AND NOT removed;
            DROP INDEX notifications_unread;
            """),
])
