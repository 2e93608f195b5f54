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
])
