import PostlyEvents
import PostlyPostgres

/// The federation service's tables: the consumed sequences (version 1, with the outbox it does
/// not use), the write unit's tables (version 2), then its own.
let schema = Migrations([
    Outbox.migration,
    WriteUnit.migration(version: 2),
    Migration(
        version: 3, name: "federation",
        sql: """
            -- Every author the events told of, as a fediverse actor. The handle is fixed at first
            -- sight: renaming it would lose the actor's followers. `sequence` is the last user
            -- event applied (0 while only posts named the author).
            CREATE TABLE actors (
                user_id text PRIMARY KEY,
                handle text NOT NULL UNIQUE,
                name text NOT NULL,
                profile_picture text,
                sequence bigint NOT NULL DEFAULT 0
            );
            -- RSA-2048 key pairs, made on first need: a user's (actor_id is the user id) and the
            -- instance actor's (actor_id '').
            CREATE TABLE actor_keys (
                actor_id text PRIMARY KEY,
                private_key_pem text NOT NULL,
                public_key_pem text NOT NULL
            );
            -- Every post the events told of. `create_sequence`: the event whose Create went out,
            -- with no Delete since (so an edit is an Update, a delete or unpublish a Delete), and
            -- the Create's id. A deleted post keeps its row (a tombstone, without the post) so
            -- that its id answers 410.
            CREATE TABLE articles (
                post_id text PRIMARY KEY,
                author_id text NOT NULL,
                status text NOT NULL CHECK (status IN ('published', 'draft', 'deleted')),
                create_sequence bigint,
                post jsonb,
                published_at timestamptz,
                deleted_at timestamptz
            );
            CREATE INDEX articles_outbox ON articles (author_id, published_at DESC, post_id) WHERE status = 'published';
            -- Remote actors that signed something we accepted: their key and their inboxes.
            CREATE TABLE remote_actors (
                id text PRIMARY KEY,
                key_id text NOT NULL UNIQUE,
                public_key_pem text NOT NULL,
                inbox text NOT NULL,
                shared_inbox text,
                fetched_at timestamptz NOT NULL
            );
            CREATE TABLE followers (
                actor_id text NOT NULL,
                follower_id text NOT NULL,
                inbox text NOT NULL,
                shared_inbox text,
                follow_id text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (actor_id, follower_id)
            );
            CREATE INDEX followers_by_follower ON followers (follower_id);
            -- Inbound activity ids already handled: a repeated one changes nothing.
            CREATE TABLE inbound_activities (
                activity_id text PRIMARY KEY,
                received_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX inbound_activities_age ON inbound_activities (received_at);
            -- One row per activity and (shared) inbox, until it is delivered (then deleted) or
            -- given up (`dead`). `next_attempt_at` is also the claim: a worker moves it a lease
            -- ahead when it takes the row, so a worker that dies leaves it due again.
            CREATE TABLE deliveries (
                id bigserial PRIMARY KEY,
                activity_id text NOT NULL,
                inbox text NOT NULL,
                host text NOT NULL,
                signer text NOT NULL,
                body text NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL,
                last_status integer,
                last_error text,
                dead boolean NOT NULL DEFAULT false,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (activity_id, inbox)
            );
            CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE NOT dead;
            CREATE INDEX deliveries_given_up ON deliveries (created_at) WHERE dead;
            -- Hosts whose inboxes keep failing: paused for a while after too many in a row.
            CREATE TABLE inbox_hosts (
                host text PRIMARY KEY,
                consecutive_failures integer NOT NULL DEFAULT 0,
                paused_until timestamptz
            );
            """),
    Migration(
        version: 4, name: "inbound activities per actor",
        sql: """
            -- Repeats are told apart per signing actor: by id alone, another actor of the same
            -- server, first with an id its neighbour was to use, made the real activity a repeat.
            -- Ids seen before have no actor (''); a repeat of one is applied again, which changes
            -- nothing. The actor by its digest: two ids of 2,048 bytes would not fit an index row.
            ALTER TABLE inbound_activities ADD COLUMN actor_id text NOT NULL DEFAULT '';
            ALTER TABLE inbound_activities ALTER COLUMN actor_id DROP DEFAULT;
            ALTER TABLE inbound_activities DROP CONSTRAINT inbound_activities_pkey;
            CREATE UNIQUE INDEX inbound_activities_seen ON inbound_activities (md5(actor_id), activity_id);
            """),
    Migration(
        version: 5, name: "pending deliveries by post",
        sql: """
            -- A post's Create and Update deliveries, by the post's id (what precedes the '#' of
            -- theirs): its Delete drops those not yet delivered.
            CREATE INDEX deliveries_post_changes ON deliveries (split_part(activity_id, '#', 1))
            WHERE activity_id ~ '#(create|update)-[0-9]+$';
            """),
    Migration(
        version: 6, name: "handle suffixes",
        sql: """
            -- The last suffix handed out for each handle base (`ActorRepository.store`), begun with
            -- the largest the actors hold: a new actor's handle costs a few statements however
            -- many share its base (every non-Latin name is `user`).
            CREATE TABLE handle_suffixes (base text PRIMARY KEY, last integer NOT NULL);
            INSERT INTO handle_suffixes (base, last)
            SELECT substring(handle FROM '^(.+)_[0-9]{1,9}$'), max(substring(handle FROM '_([0-9]{1,9})$')::integer)
            FROM actors WHERE handle ~ '^.+_[0-9]{1,9}$' GROUP BY 1;
            """),
    Migration(
        version: 7, name: "deliveries in order per object and inbox",
        sql: """
            -- The activities of one object reach an inbox one at a time, in the order they were
            -- queued (`DeliveryQueue`). `object_id`: that object (none for an Accept of an older
            -- release, sent in no order); `sending`: claimed and not answered yet; `superseded`:
            -- made pointless by a newer activity of its object while being sent, so not sent
            -- again. The index replaces migration 5's.
            ALTER TABLE deliveries ADD COLUMN object_id text, ADD COLUMN sending boolean NOT NULL DEFAULT false,
                ADD COLUMN superseded boolean NOT NULL DEFAULT false;
            -- A post's or an actor's activity queued without its object (by an instance of an older
            -- release, during a rolling update) gets it from its id, and joins the order.
            CREATE FUNCTION delivery_object() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.object_id IS NULL AND NEW.activity_id ~ '#(create|update|delete)-[0-9]+$' THEN
                    NEW.object_id := split_part(NEW.activity_id, '#', 1);
                END IF;
                RETURN NEW;
            END
            $$;
            CREATE TRIGGER delivery_object BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION delivery_object();
            UPDATE deliveries SET object_id = split_part(activity_id, '#', 1)
            WHERE activity_id ~ '#(create|update|delete)-[0-9]+$' AND NOT dead;
            CREATE INDEX deliveries_by_object ON deliveries (object_id, inbox, id) WHERE NOT dead;
            DROP INDEX deliveries_post_changes;
            """),
    Migration(
        version: 8, name: "an object per publication",
        sql: """
            -- A post published again after it was unpublished is a new object: servers keep the
            -- tombstone of a deleted object and refuse another Create of its id. `publication`:
            -- the sequence of the Create that named the post's last object (its id is the post's
            -- followed by it); NULL while that is the first, whose id is the post's own.
            ALTER TABLE articles ADD COLUMN publication bigint;
            """),
    Migration(
        version: 9, name: "hosts' last failure",
        sql: """
            -- When a host last failed, so that one not heard of since the retention is forgotten
            -- (`DeliveryQueue.purge`); a host that answers loses its row at once. It only grew, a
            -- row for every host that ever failed, as `remote_actors` did (now forgotten a week
            -- after their last fetch unless they follow someone here). `failing_since`: the
            -- first failure of its run; a host failing for a week is taken for gone.
            ALTER TABLE inbox_hosts ADD COLUMN failed_at timestamptz NOT NULL DEFAULT now(),
                ADD COLUMN failing_since timestamptz NOT NULL DEFAULT now();
            DELETE FROM inbox_hosts WHERE consecutive_failures = 0;
            """),
    Migration(
        version: 10, name: "accepts before posts",
        sql: """
            -- The pending Accepts of an actor to a host, which the Creates of its posts to that
            -- host wait for (`DeliveryQueue.claim`).
            CREATE INDEX deliveries_accepts ON deliveries (host, signer, id) WHERE NOT dead AND activity_id LIKE '%#accepts/%';
            """),
    Migration(
        version: 11, name: "hosts without their default port",
        sql: """
            -- An inbox naming its scheme's default port is on the host without it
            -- (`DeliveryQueue.host`): the deliveries queued before take that name. A host's
            -- record under the former name is dropped: it only starts its run of failures again.
            UPDATE deliveries SET host = regexp_replace(host, CASE WHEN inbox ~* '^https:' THEN ':443$' ELSE ':80$' END, '')
            WHERE host ~ ':(443|80)$';
            DELETE FROM inbox_hosts WHERE host ~ ':(443|80)$';
            """),
    Migration(
        version: 12, name: "follows ended",
        sql: """
            -- A Follow that ended (undone, or replaced by a newer Follow of the same actor), kept
            -- from then as long as any activity seen (`FollowerRepository`): an Undo of it
            -- arriving again, or late, leaves a newer follow.
            ALTER TABLE inbound_activities ADD COLUMN ended_follow boolean NOT NULL DEFAULT false;
            """),
])
