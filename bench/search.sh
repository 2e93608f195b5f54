#!/usr/bin/env bash
# Benchmarks the search service on a PostgreSQL and a broker of its own: generated posts
# (bench/search/generate.py: Zipf-distributed words, 300-1,000 a post) written straight into
# its tables, the service started on them (the time until it is ready is the load of its index
# in memory, and its memory is read then and after the runs), then one-word, three-word, typo
# and prefix queries with wrk, directly and through the gateway.
# Usage: bench/search.sh [POSTS...] (default: 10000 100000).
# BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (5, before each run, not reported),
# BENCH_CONNECTIONS (32); POSTLY_BUILD_CONFIGURATION (release) may be debug to check the script
# quickly on a small size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
seconds=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-32}
configuration=${POSTLY_BUILD_CONFIGURATION:-release}

source "$here/search/setup.sh"
psql=("$pg_bin/psql" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres)

# Starts the service on $database and waits until it is ready (its index loaded).
start_service() {
  service_port=$(free_port)
  AUTH_JWKS_URL=http://127.0.0.1:$keys_port/jwks PORT=$service_port POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_DATABASE=$database \
    POSTGRES_POOL_SIZE=32 KAFKA_BROKERS=127.0.0.1:$broker_port LOG_LEVEL=info "$binary" >>"$run/search-$size.log" 2>&1 &
  service_pid=$!
  for _ in $(seq 1200); do
    curl -fs -o /dev/null "http://127.0.0.1:$service_port/health/ready" && return 0
    sleep 0.1
  done
  echo "search did not get ready; its log:" >&2
  tail -20 "$run/search-$size.log" >&2
  exit 1
}

rss() { awk '/VmRSS/{printf "%.0f MiB", $2 / 1024}' "/proc/$service_pid/status"; }

report() {  # name wrk-output
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$2")
  p50=$(awk '$1=="50%"{print $2}' <<<"$2")
  p99=$(awk '$1=="99%"{print $2}' <<<"$2")
  errors=$(grep -E "Non-2xx|Socket errors" <<<"$2" | tr '\n' ' ' || true)
  printf '  %-30s %10s req/s   p50 %-9s p99 %-9s %s\n' "$1" "$rps" "$p50" "$p99" "$errors"
}

for size in "${sizes[@]}"; do
  database=postly_search_$size
  "${psql[@]}" -c "CREATE DATABASE $database"
  start_service  # applies the migrations
  stop_service

  echo "generating and storing $size posts"
  mkdir -p "$run/data-$size"
  python3 "$here/search/generate.py" "$size" "$run/data-$size"
  started=$(date +%s)
  "${psql[@]}" -d "$database" <<SQL
CREATE UNLOGGED TABLE generated (id text, title text, content text, author_id text, published_at timestamptz);
\copy generated FROM '$run/data-$size/posts.tsv'
INSERT INTO authors (user_id, name) SELECT DISTINCT author_id, 'Author ' || author_id FROM generated;
INSERT INTO lexicon (word)
SELECT word FROM ts_stat('SELECT to_tsvector(''search_words'', title || '' '' || content) FROM generated')
WHERE word ~ '^[[:alpha:]]{2,40}\$' ORDER BY word ON CONFLICT DO NOTHING;
SQL
  # The split trigger takes a few milliseconds a post: two sessions, one a core.
  halves=()
  for half in 0 1; do
    "${psql[@]}" -d "$database" <<SQL &
INSERT INTO documents (id, sequence, status, title, content_text, author_id, published_at, post)
SELECT id, 1, 'published', title, content, author_id, published_at, jsonb_build_object(
    '_id', id, 'title', title, 'content', content, 'contentHtml', '<p>' || content || '</p>', 'excerpt', left(content, 200),
    'slug', id, 'status', 'published', 'coverImage', NULL,
    'author', jsonb_build_object('userId', author_id, 'name', 'Author ' || author_id, 'profilePicture', NULL),
    'views', 0, 'likes', 0, 'comments', '[]'::jsonb, 'commentsCount', 0, 'readTime', 3,
    'createdAt', to_char(published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'publishedAt', to_char(published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'version', 1)
FROM generated WHERE hashtext(id) & 1 = $half;
SQL
    halves+=($!)
  done
  wait "${halves[@]}"
  "${psql[@]}" -d "$database" -c "DROP TABLE generated" -c "VACUUM ANALYZE documents"
  echo "  stored in $(( $(date +%s) - started )) s (in SQL, not through events); lexicon: $("${psql[@]}" -d "$database" -Atc 'SELECT count(*) FROM lexicon') words"

  loading=$(date +%s.%N)
  start_service
  echo "  ready after $(echo "$(date +%s.%N) - $loading" | bc) s: $(grep -o '"duration":"[^"]*"' "$run/search-$size.log" | tail -1 | cut -d'"' -f4) loading the index; RSS $(rss)"

  gateway_port=$(free_port)
  POSTLY_SEARCH_PORT=$service_port gateway_config "$run/nginx" "$gateway_port"
  gateway_start "$run/nginx" "$gateway_port" "$run/gateway.log"
  for route in "direct:$service_port" "gateway:$gateway_port"; do
    echo "$size posts, $connections connections, ${seconds}s each, ${route%%:*}"
    for kind in one-word three-words typo prefix; do
      # A warm-up first, not reported: a service that has answered for a while holds the
      # contents of what is searched (ContentCache), and its threads and heap have grown.
      BENCH_QUERIES="$run/data-$size/$kind.txt" wrk -t2 -c"$connections" -d"${BENCH_WARMUP_SECONDS:-5}s" \
        -s "$here/search/queries.lua" "http://127.0.0.1:${route#*:}" >/dev/null
      out=$(BENCH_QUERIES="$run/data-$size/$kind.txt" wrk -t2 -c"$connections" -d"${seconds}s" --latency \
        -s "$here/search/queries.lua" "http://127.0.0.1:${route#*:}")
      report "$kind" "$out"
    done
  done
  echo "  RSS after the runs: $(rss)"
  gateway_stop "$run/nginx"
  stop_service
done
