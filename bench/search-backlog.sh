#!/usr/bin/env bash
# How fast the search service indexes post events that waited, on a PostgreSQL and a broker of
# its own: BENCH_BACKLOG (10000) `post.created` events (published posts of 100 to 300 words in
# sentences, bench/search/backlog.py) are produced to postly.posts while the service is
# stopped; then it is started and timed until a word they share has them all
# (X-Total-Count): from the start (the index's load and the group's join included), and
# from the first found to the last. POSTLY_BUILD_CONFIGURATION (release).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
backlog=${BENCH_BACKLOG:-10000}
configuration=${POSTLY_BUILD_CONFIGURATION:-release}
word=backlogword

source "$here/search/setup.sh"
"$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE DATABASE postly_search"
service_port=$(free_port)

start_service() {
  AUTH_JWKS_URL=http://127.0.0.1:$keys_port/jwks PORT=$service_port POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres \
    POSTGRES_DATABASE=postly_search KAFKA_BROKERS=127.0.0.1:$broker_port LOG_LEVEL=info "$binary" >>"$run/search.log" 2>&1 &
  service_pid=$!
}
found() { curl -fs -o /dev/null -D - "http://127.0.0.1:$service_port/api/posts/search?q=$1&limit=1" 2>/dev/null | awk 'tolower($1)=="x-total-count:"{print $2+0}'; }
# The events are produced with confluent-kafka (PyPI), in the broker's virtual environment.
"$postly_root/.deps/venv/bin/python" -c 'import confluent_kafka' 2>/dev/null || "$postly_root/.deps/venv/bin/pip" install -q confluent-kafka==2.16.1
produce() { "$postly_root/.deps/venv/bin/python" "$here/search/backlog.py" "127.0.0.1:$broker_port" "$@" "$here/../Tests/Fixtures/events/post.created.json"; }

# A first start makes the topics and the tables, and commits the group's offsets past a post.
start_service
for _ in $(seq 600); do curl -fs -o /dev/null "http://127.0.0.1:$service_port/health/ready" && break; sleep 0.1; done
produce 1 warmupword
for _ in $(seq 300); do [ "$(found warmupword)" = 1 ] && break; sleep 0.1; done
[ "$(found warmupword)" = 1 ] || { echo "the warm-up post was not found; the log:" >&2; tail -20 "$run/search.log" >&2; exit 1; }
stop_service

produce "$backlog" "$word"
echo "$backlog post events waiting"

started=$(date +%s.%N)
start_service
python3 "$here/search/found.py" "$service_port" "$word" "$backlog" "$started"
echo "  RSS $(awk '/VmRSS/{printf "%.0f MiB", $2 / 1024}' "/proc/$service_pid/status")"
