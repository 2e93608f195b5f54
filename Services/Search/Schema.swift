import PostlyEvents
import PostlyPostgres

/// The search service's tables: the consumed sequences (version 1, with the outbox it does not
/// use), then the text search configurations, the query function and the index's tables, then
/// the documents' texts split into words for highlighting, then those words computed once per
/// write with each content word's first position, then each post kept as its events carry it,
/// then the change log the instances keep their indexes in memory with, then the texts split
/// by the indexer, then the documents compressed with lz4, then no vectors, then no statistics
/// of what nothing filters on.
let schema = Migrations([
    Outbox.migration,
    Migration(
        version: 2, name: "search index",
        sql: """
            CREATE EXTENSION IF NOT EXISTS unaccent;

            -- Words folded to ASCII where they have accents (creme finds Crème), English stems.
            CREATE TEXT SEARCH CONFIGURATION search_english (COPY = english);
            ALTER TEXT SEARCH CONFIGURATION search_english
                ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
            -- The same words folded but not stemmed: the lexicon's words and the query's.
            CREATE TEXT SEARCH CONFIGURATION search_words (COPY = simple);
            ALTER TEXT SEARCH CONFIGURATION search_words
                ALTER MAPPING FOR hword, hword_part, word WITH unaccent, simple;

            -- Any of `words` (separated by spaces), stemmed, as a query; NULL when none is left
            -- (stop words only). Built from lexemes, so no text ever becomes query syntax.
            CREATE FUNCTION search_query(words text) RETURNS tsquery
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''', ' | ')::tsquery
                FROM unnest(to_tsvector('search_english', words))
            $$;
            """ + version2Tables),
    Migration(
        version: 3, name: "documents split into words",
        sql: """
            -- A text as ts_headline splits it: what is between words (spaces, punctuation, tags)
            -- and words, alternating, {before the first word, word, between, word, ..., after
            -- the last} ({} for an empty text); joined, the text again. A hyphenated word is its
            -- parts (the parser also gives the whole, left out). U+E000 marks where words start
            -- and end while the tokens are one string, so it is removed from the text.
            CREATE FUNCTION search_tokens(content text) RETURNS text[]
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT string_to_array(coalesce(string_agg(
                    CASE WHEN t.alias IN ('blank', 'tag') THEN replace(p.token, U&'\\E000', '')
                         ELSE U&'\\E000' || p.token || U&'\\E000' END, '' ORDER BY p.position), ''), U&'\\E000')
                FROM ts_parse('default', content) WITH ORDINALITY AS p(tokid, token, position)
                JOIN ts_token_type('default') AS t ON t.tokid = p.tokid
                WHERE t.alias NOT IN ('url', 'numhword', 'asciihword', 'hword')
            $$;

            -- The lexeme of each word of a `search_tokens` split as the index stems it ('' for a
            -- stop word). The configuration is named with its schema: a restore computes
            -- generated columns with an empty search_path.
            CREATE FUNCTION search_lexemes(tokens text[]) RETURNS text[]
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT coalesce(array_agg(coalesce((tsvector_to_array(to_tsvector('public.search_english', t.token)))[1], '')
                                          ORDER BY t.position), '{}')
                FROM unnest(tokens) WITH ORDINALITY AS t(token, position)
                WHERE t.position % 2 = 0
            $$;
            """ + version3Columns),
    Migration(
        version: 4, name: "documents split once, with first positions",
        sql: """
            -- Each lexeme of a `search_lexemes` split at its first position (1 for the first
            -- word, at most 16383, tsvector's limit): a search finds where its excerpt begins by
            -- a binary search instead of a walk through every word. Quoted as `search_query`
            -- quotes, so no lexeme is read as syntax.
            CREATE FUNCTION search_positions(lexemes text[]) RETURNS tsvector
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT coalesce(string_agg('''' || replace(replace(w.lexeme, '\\', '\\\\'), '''', '''''') || ''':'
                                           || least(w.position, 16383), ' ')::tsvector, '')
                FROM (SELECT lexeme, min(position) AS position
                      FROM unnest(lexemes) WITH ORDINALITY AS w(lexeme, position)
                      WHERE lexeme <> '' GROUP BY lexeme) AS w
            $$;

            -- Generated columns split each text once per column (twice for the lexemes) and
            -- cannot build on each other; the trigger splits each text once, and not at all
            -- when it did not change. Names carry their schema: a restore runs triggers with
            -- an empty search_path.
            CREATE FUNCTION search_split_document() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' OR NEW.title IS DISTINCT FROM OLD.title THEN
                    NEW.title_tokens := public.search_tokens(NEW.title);
                    NEW.title_lexemes := public.search_lexemes(NEW.title_tokens);
                END IF;
                IF TG_OP = 'INSERT' OR NEW.content_text IS DISTINCT FROM OLD.content_text THEN
                    NEW.content_tokens := public.search_tokens(NEW.content_text);
                    NEW.content_lexemes := public.search_lexemes(NEW.content_tokens);
                    NEW.content_positions := public.search_positions(NEW.content_lexemes);
                END IF;
                RETURN NEW;
            END
            $$;

            ALTER TABLE documents
                ALTER COLUMN title_tokens DROP EXPRESSION,
                ALTER COLUMN title_lexemes DROP EXPRESSION,
                ALTER COLUMN content_tokens DROP EXPRESSION,
                ALTER COLUMN content_lexemes DROP EXPRESSION,
                ADD COLUMN content_positions tsvector;
            UPDATE documents SET content_positions = search_positions(content_lexemes);
            """ + splitTrigger),
    Migration(
        version: 5, name: "documents keep the post as its events carry it",
        sql: """
            ALTER TABLE documents ADD COLUMN post jsonb;
            UPDATE documents SET post = jsonb_build_object(
                '_id', id, 'title', title, 'content', content, 'contentHtml', content_html, 'excerpt', excerpt, 'slug', slug,
                'status', status, 'coverImage', cover_image,
                'author', jsonb_build_object('userId', author_id, 'name', '', 'profilePicture', NULL),
                'views', 0, 'likes', likes, 'comments', '[]'::jsonb, 'commentsCount', 0, 'readTime', read_time,
                'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'updatedAt', to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'publishedAt', to_char(published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'version', version)
            WHERE NOT deleted;
            """ + version5Columns),
    Migration(
        version: 6, name: "the index in memory: a change log, stems in the lexicon, vectors from the split",
        sql: """
            -- Vectors made from the split words instead of parsing each text again (the oracle of
            -- the tests reads them; search answers from memory). Published, not deleted rows only.
            CREATE OR REPLACE FUNCTION search_split_document() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' OR NEW.title IS DISTINCT FROM OLD.title THEN
                    NEW.title_tokens := public.search_tokens(NEW.title);
                    NEW.title_lexemes := public.search_lexemes(NEW.title_tokens);
                END IF;
                IF TG_OP = 'INSERT' OR NEW.content_text IS DISTINCT FROM OLD.content_text THEN
                    NEW.content_tokens := public.search_tokens(NEW.content_text);
                    NEW.content_lexemes := public.search_lexemes(NEW.content_tokens);
                    NEW.content_positions := public.search_positions(NEW.content_lexemes);
                END IF;
                IF NEW.status = 'published' AND NOT NEW.deleted THEN
                    NEW.title_vector := array_to_tsvector(array_remove(NEW.title_lexemes, ''));
                    NEW.vector := setweight(NEW.title_vector, 'A')
                        || setweight(array_to_tsvector(array_remove(NEW.content_lexemes, '')), 'C');
                ELSE
                    NEW.title_vector := NULL;
                    NEW.vector := NULL;
                END IF;
                RETURN NEW;
            END
            $$;
            DROP TRIGGER split ON documents;
            """ + version6Tables),
    Migration(
        version: 7, name: "texts split by the indexer",
        sql: """
            -- The indexer splits plain texts itself (`TextSplit`) and writes their split with
            -- them; it leaves the split NULL for a text it cannot split, which is split here,
            -- as before. The vectors are made from the split as before (the oracle of the tests
            -- reads them; search answers from memory). Published, not deleted rows only.
            CREATE OR REPLACE FUNCTION search_split_document() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.title_tokens IS NULL THEN
                    NEW.title_tokens := public.search_tokens(NEW.title);
                    NEW.title_lexemes := public.search_lexemes(NEW.title_tokens);
                END IF;
                IF NEW.content_tokens IS NULL THEN
                    NEW.content_tokens := public.search_tokens(NEW.content_text);
                    NEW.content_lexemes := public.search_lexemes(NEW.content_tokens);
                    NEW.content_positions := NULL;
                END IF;
                IF NEW.content_positions IS NULL THEN
                    NEW.content_positions := public.search_positions(NEW.content_lexemes);
                END IF;
                IF NEW.status = 'published' AND NOT NEW.deleted THEN
                    NEW.title_vector := array_to_tsvector(array_remove(NEW.title_lexemes, ''));
                    NEW.vector := setweight(NEW.title_vector, 'A')
                        || setweight(array_to_tsvector(array_remove(NEW.content_lexemes, '')), 'C');
                ELSE
                    NEW.title_vector := NULL;
                    NEW.vector := NULL;
                END IF;
                RETURN NEW;
            END
            $$;
            """),
    Migration(version: 8, name: "documents compressed with lz4", sql: version8Columns),
    Migration(
        version: 9, name: "no vectors or first positions: the index is in memory",
        sql: version9Columns + """
            -- The trigger only splits the texts the indexer leaves to PostgreSQL.
            CREATE OR REPLACE FUNCTION search_split_document() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.title_tokens IS NULL THEN
                    NEW.title_tokens := public.search_tokens(NEW.title);
                    NEW.title_lexemes := public.search_lexemes(NEW.title_tokens);
                END IF;
                IF NEW.content_tokens IS NULL THEN
                    NEW.content_tokens := public.search_tokens(NEW.content_text);
                    NEW.content_lexemes := public.search_lexemes(NEW.content_tokens);
                END IF;
                RETURN NEW;
            END
            $$;
            """),
    Migration(version: 10, name: "no statistics of the texts and their splits", sql: version10Statistics),
    Migration(version: 11, name: "comments ordered as posts embed them", sql: version11CommentsOrder),
])

/// Migration 9: the vectors and each word's first position were written with every post for
/// the PostgreSQL search the index in memory replaced; the tests' oracle makes them from the
/// split when it searches. A post is found when it is published and not deleted. (The index
/// of the authors' found posts goes with the vector its condition named: nothing reads it.)
let version9Columns = """
    ALTER TABLE documents DROP COLUMN vector, DROP COLUMN title_vector, DROP COLUMN content_positions;
    """

/// The index's tables as the migrations leave them, created again, beside the live ones, by a
/// reindex.
let indexTables = version2Tables + """
    ALTER TABLE documents
        ADD COLUMN title_tokens text[],
        ADD COLUMN title_lexemes text[],
        ADD COLUMN content_tokens text[],
        ADD COLUMN content_lexemes text[],
        ADD COLUMN content_positions tsvector,
        ADD COLUMN post jsonb;
    """ + version5Columns + version6Tables + version8Columns + version9Columns + version10Statistics + version11CommentsOrder

/// Migration 11: a post's comments in the order the posts service embeds them, ties of a
/// millisecond by id (by when their events arrived here, a search result and the post disagreed).
let version11CommentsOrder = """
    CREATE INDEX comments_by_post_in_order ON comments (post_id, created_at, id) WHERE NOT deleted;
    DROP INDEX comments_by_post;
    """

/// Migration 10: nothing filters or joins on a document's texts, its post or its split, and
/// ANALYZE's statistics of the split's arrays (each array's most common elements) were nearly
/// all of its cost: 5.5-6.2 s of a core for every run at 38,000 posts, 105-124 ms without.
/// Autovacuum runs it again each time the table grows by a tenth.
let version10Statistics = """
    ALTER TABLE documents
        ALTER COLUMN title SET STATISTICS 0,
        ALTER COLUMN content_text SET STATISTICS 0,
        ALTER COLUMN post SET STATISTICS 0,
        ALTER COLUMN title_tokens SET STATISTICS 0,
        ALTER COLUMN title_lexemes SET STATISTICS 0,
        ALTER COLUMN content_tokens SET STATISTICS 0,
        ALTER COLUMN content_lexemes SET STATISTICS 0;
    """

/// Migration 8: every post's texts and splits are compressed when the indexer writes them;
/// PostgreSQL's default (pglz) took a fifth of the database's time indexing a backlog, lz4 a
/// fraction of that. Values already written stay as they are until they are written again.
let version8Columns = """
    ALTER TABLE documents
        ALTER COLUMN content_text SET COMPRESSION lz4,
        ALTER COLUMN post SET COMPRESSION lz4,
        ALTER COLUMN title_tokens SET COMPRESSION lz4,
        ALTER COLUMN title_lexemes SET COMPRESSION lz4,
        ALTER COLUMN content_tokens SET COMPRESSION lz4,
        ALTER COLUMN content_lexemes SET COMPRESSION lz4,
        ALTER COLUMN content_positions SET COMPRESSION lz4;
    """

/// Migration 6: the search answers from memory, which every instance keeps from the change log
/// (`IndexFollower`); the trigger also fills the vectors, now only the oracle's, so their GIN
/// indexes go.
let version6Tables = """
    -- Each change to what search shows, in commit order: the writers number them under one
    -- advisory lock held until they commit, so an instance that has read up to a position
    -- has seen every change before it. A post's row changed (its post, likes or comments),
    -- or an author's.
    CREATE TABLE changes (
        position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        post_id text,
        author_id text,
        at timestamptz NOT NULL DEFAULT now()
    );
    -- The stems of each lexicon word, which typos and prefixes look for.
    ALTER TABLE lexicon ADD COLUMN lexemes text[]
        GENERATED ALWAYS AS (tsvector_to_array(to_tsvector('public.search_english', word))) STORED;
    DROP INDEX documents_vector;
    DROP INDEX documents_title_vector;
    CREATE TRIGGER split BEFORE INSERT OR UPDATE OF title, content_text, status, deleted ON documents
        FOR EACH ROW EXECUTE FUNCTION public.search_split_document();
    """

/// What a result shows comes from `post` (migration 5): the columns left are what the index
/// searches, ranks and marks.
let version5Columns = """
    ALTER TABLE documents
        DROP COLUMN content, DROP COLUMN content_html, DROP COLUMN excerpt, DROP COLUMN slug, DROP COLUMN cover_image,
        DROP COLUMN read_time, DROP COLUMN created_at, DROP COLUMN updated_at, DROP COLUMN version;
    """

/// Fills the split columns of `documents` (migration 4's `search_split_document`).
let splitTrigger = """
    CREATE TRIGGER split BEFORE INSERT OR UPDATE OF title, content_text ON documents
        FOR EACH ROW EXECUTE FUNCTION public.search_split_document();
    """

/// Each title and content split into words when the row is written (so also when the migration
/// adds them), for a search to mark its results' matches without parsing their texts again.
/// Migration 4 turns them into columns its trigger fills.
let version3Columns = """
    ALTER TABLE documents
        ADD COLUMN title_tokens text[] GENERATED ALWAYS AS (search_tokens(title)) STORED,
        ADD COLUMN title_lexemes text[] GENERATED ALWAYS AS (search_lexemes(search_tokens(title))) STORED,
        ADD COLUMN content_tokens text[] GENERATED ALWAYS AS (search_tokens(content_text)) STORED,
        ADD COLUMN content_lexemes text[] GENERATED ALWAYS AS (search_lexemes(search_tokens(content_text))) STORED;
    """

/// The index's tables as migration 2 created them.
let version2Tables = """
    -- Every post the events told of, drafts and deleted ones included (a draft's likes
    -- are needed when it is published; a tombstone keeps an older event from bringing
    -- a deleted post back). Only published posts have vectors, so only they are found.
    CREATE TABLE documents (
        id text PRIMARY KEY,
        sequence bigint NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        status text NOT NULL,
        title text NOT NULL,
        content text NOT NULL,
        content_html text NOT NULL,
        content_text text NOT NULL,
        excerpt text NOT NULL,
        slug text NOT NULL,
        cover_image text,
        author_id text NOT NULL,
        read_time integer NOT NULL,
        likes integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        published_at timestamptz,
        version integer NOT NULL,
        -- The title weighted A, the content C.
        vector tsvector,
        title_vector tsvector
    );
    CREATE INDEX documents_vector ON documents USING gin (vector);
    CREATE INDEX documents_title_vector ON documents USING gin (title_vector);
    CREATE INDEX documents_by_author ON documents (author_id) WHERE vector IS NOT NULL;

    -- Authors' names and pictures: from user events (sequence > 0), else from the
    -- newest post event that named them (sequence 0). Searched apart from the posts,
    -- so a rename is one row, whatever the number of the author's posts.
    CREATE TABLE authors (
        user_id text PRIMARY KEY,
        name text NOT NULL,
        profile_picture text,
        sequence bigint NOT NULL DEFAULT 0,
        name_vector tsvector GENERATED ALWAYS AS (to_tsvector('search_english', name)) STORED
    );
    CREATE INDEX authors_name_vector ON authors USING gin (name_vector);

    -- The comments shown in each result; a deleted one stays as a tombstone.
    CREATE TABLE comments (
        position bigserial UNIQUE,
        id text PRIMARY KEY,
        post_id text NOT NULL,
        content text NOT NULL,
        author_id text NOT NULL,
        author_name text NOT NULL,
        author_picture text,
        created_at timestamptz NOT NULL,
        deleted boolean NOT NULL DEFAULT false
    );
    CREATE INDEX comments_by_post ON comments (post_id, created_at, position) WHERE NOT deleted;

    -- The distinct words of the index (folded, not stemmed), for typos and prefixes.
    -- Only ever added to; `added` lets every instance load just what is new.
    CREATE TABLE lexicon (
        word text PRIMARY KEY,
        added bigint GENERATED ALWAYS AS IDENTITY
    );
    CREATE INDEX lexicon_added ON lexicon (added);
    """
