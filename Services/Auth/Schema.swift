import PostlyEvents
import PostlyPostgres

/// The auth database: the outbox (version 1), then users, sessions, refresh tokens and the
/// token-signing keys, the write unit's tables, and the failed logins.
let schema = Migrations([
    Outbox.migration,
    Migration(
        version: 2, name: "accounts",
        sql: """
            CREATE TABLE users (
                id text PRIMARY KEY,
                name text NOT NULL,
                -- Stored trimmed and lower-cased; unique.
                email text NOT NULL UNIQUE,
                -- bcrypt; NULL for accounts that only ever signed in with Google.
                password_hash text,
                google_subject text UNIQUE,
                profile_picture text,
                created_at timestamptz NOT NULL DEFAULT now(),
                last_login timestamptz,
                -- The sequence of the user's last event on postly.users (user.*, session.revoked);
                -- in the write unit's event_sequences since version 4.
                event_sequence bigint NOT NULL DEFAULT 0
            );
            CREATE TABLE sessions (
                id text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users (id),
                created_at timestamptz NOT NULL DEFAULT now(),
                -- When the last access token issued for the session expires.
                access_expires_at timestamptz NOT NULL,
                revoked_at timestamptz
            );
            CREATE INDEX sessions_user ON sessions (user_id);
            CREATE TABLE refresh_tokens (
                -- SHA-256 of the opaque token; the token itself is never stored.
                token_hash bytea PRIMARY KEY,
                session_id text NOT NULL REFERENCES sessions (id),
                created_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz NOT NULL,
                spent_at timestamptz
            );
            CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);
            CREATE TABLE signing_keys (
                kid text PRIMARY KEY,
                algorithm text NOT NULL,
                private_key bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                -- No longer used to sign; published until tokens signed with it have expired.
                retired_at timestamptz
            );
            """),
    WriteUnit.migration(version: 3),
    Migration(
        version: 4, name: "events through the write unit",
        sql: """
            INSERT INTO event_sequences (topic, key, sequence)
            SELECT 'postly.users', id, event_sequence FROM users WHERE event_sequence > 0;
            ALTER TABLE users DROP COLUMN event_sequence;
            """),
    LoginRateLimiter.migration,
    Migration(
        version: 6, name: "refresh replay",
        sql: """
            -- The answer of the refresh that spent the token, sealed with a key only the token's
            -- holder can derive; a retry within the grace gets it once more (replayed_at).
            ALTER TABLE refresh_tokens ADD COLUMN answer bytea, ADD COLUMN replayed_at timestamptz;
            """),
    LoginRateLimiter.digestMigration,
    Migration(
        version: 8, name: "refresh replay within the grace",
        sql: """
            -- Every use within the grace gets the answer again, as the contract says, not only
            -- the first: nothing records a replay.
            ALTER TABLE refresh_tokens DROP COLUMN replayed_at;
            """),
    Migration(
        version: 9, name: "refresh tokens that name their session",
        sql: """
            -- Such a token's row goes once it is spent past the grace: presented again, the session
            -- it names is revoked all the same. Tokens issued before keep their rows until they expire.
            ALTER TABLE refresh_tokens ADD COLUMN names_session boolean NOT NULL DEFAULT false;
            """),
    LoginRateLimiter.knownClientsMigration,
])
