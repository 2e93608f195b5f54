#!/usr/bin/env bash
# Benchmarks the search service on a PostgreSQL and a broker of its own: generated posts
# (bench/search/generate.py: Zipf-distributed words, 300-1,000 a post) loaded straight into
# the index, then one-word, three-word, typo and prefix queries with wrk, directly and
# through the gateway. Usage: bench/search.sh [POSTS...] (default: 10000 100000).
# BENCH_SECONDS (10), BENCH_CONNECTIONS (32); POSTLY_BUILD_CONFIGURATION (release) may be
# debug to check the script quickly on a small size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
seconds=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-32}
configuration=${POSTLY_BUILD_CONFIGURATION:-release}

run=$(mktemp -d /tmp/postly-search-bench.XXXXXX)
chmod 755 "$run"
service_pid=
cleanup() {
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  gateway_stop "$run/nginx" 2>/dev/null || true
  broker_stop "$run/broker"
  postgres_stop "$run/postgres"
  rm -rf "$run"
}
trap cleanup EXIT

(cd "$postly_root" && swift build -c "$configuration" --product postly-search)
binary="$(cd "$postly_root" && swift build -c "$configuration" --show-bin-path)/postly-search"

pg_port=$(free_port)
broker_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"
psql=("$pg_bin/psql" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres)

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
  service_port=$(free_port)
  PORT=$service_port POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_DATABASE=$database \
    POSTGRES_POOL_SIZE=32 KAFKA_BROKERS=127.0.0.1:$broker_port LOG_LEVEL=warning "$binary" >"$run/search-$size.log" 2>&1 &
  service_pid=$!
  wait_port "$service_port" 60

  echo "generating and indexing $size posts"
  mkdir -p "$run/data-$size"
  python3 "$here/search/generate.py" "$size" "$run/data-$size"
  started=$(date +%s)
  "${psql[@]}" -d "$database" <<SQL
CREATE TEMPORARY TABLE generated (id text, title text, content text, author_id text, published_at timestamptz);
\copy generated FROM '$run/data-$size/posts.tsv'
INSERT INTO authors (user_id, name) SELECT DISTINCT author_id, 'Author ' || author_id FROM generated;
INSERT INTO documents (id, sequence, status, title, content, content_html, content_text, excerpt, slug, author_id,
                       read_time, created_at, updated_at, published_at, version, vector, title_vector)
SELECT id, 1, 'published', title, content, '<p>' || content || '</p>', content, left(content, 200), id, author_id,
       3, published_at, published_at, published_at, 1,
       setweight(to_tsvector('search_english', title), 'A') || setweight(to_tsvector('search_english', content), 'C'),
       to_tsvector('search_english', title)
FROM generated;
INSERT INTO lexicon (word)
SELECT word FROM ts_stat('SELECT to_tsvector(''search_words'', title || '' '' || content) FROM generated')
WHERE word ~ '^[[:alpha:]]{2,40}\$' ORDER BY word ON CONFLICT DO NOTHING;
VACUUM ANALYZE documents;
SQL
  echo "  indexed in $(( $(date +%s) - started )) s (in SQL, not through events); lexicon: $("${psql[@]}" -d "$database" -Atc 'SELECT count(*) FROM lexicon') words"
  sleep 2  # the service loads the new words

  gateway_port=$(free_port)
  POSTLY_SEARCH_PORT=$service_port gateway_config "$run/nginx" "$gateway_port"
  gateway_start "$run/nginx" "$gateway_port" "$run/gateway.log"
  for route in "direct:$service_port" "gateway:$gateway_port"; do
    echo "$size posts, $connections connections, ${seconds}s each, ${route%%:*}"
    for kind in one-word three-words typo prefix; do
      out=$(BENCH_QUERIES="$run/data-$size/$kind.txt" wrk -t2 -c"$connections" -d"${seconds}s" --latency \
        -s "$here/search/queries.lua" "http://127.0.0.1:${route#*:}")
      report "$kind" "$out"
    done
  done
  gateway_stop "$run/nginx"
  kill "$service_pid" && wait "$service_pid" 2>/dev/null || true
  service_pid=
done
