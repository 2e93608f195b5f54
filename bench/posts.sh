#!/usr/bin/env bash
# Benchmarks the posts service (release build) through the gateway (nginx with the suite's
# configuration; BENCH_DIRECT=1 goes to the service's port instead), next to PostgreSQL's own
# limit for the same lookup (pgbench, prepared, same client count).
# BENCH_SECONDS (default 10) per measurement, BENCH_CONNECTIONS (default 64).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
seconds=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

run=$(mktemp -d /tmp/postly-posts-bench.XXXXXX)
chmod 755 "$run"
service_pid=
jwks_pid=
cleanup() {
  gateway_stop "$run/nginx"
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  [ -n "$jwks_pid" ] && kill "$jwks_pid" 2>/dev/null || true
  broker_stop "$run/broker"
  postgres_stop "$run/postgres"
  rm -rf "$run"
}
trap cleanup EXIT

pg_port=$(free_port); broker_port=$(free_port); http_port=$(free_port); jwks_port=$(free_port)
postgres_start "$run/postgres" "$pg_port" durable
broker_start "$run/broker" "$broker_port"
"$pg_bin/psql" -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE DATABASE postly_posts" >/dev/null

python3 -m postly_suite.tokens "$run" 64
(cd "$run" && exec python3 -m http.server "$jwks_port" --bind 127.0.0.1 >/dev/null 2>&1) &
jwks_pid=$!

cd "$postly_root"
swift build -c release --scratch-path .build-release --product postly-posts >/dev/null
binary="$(swift build -c release --scratch-path .build-release --show-bin-path)/postly-posts"
PORT=$http_port POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_POOL_SIZE=${POSTGRES_POOL_SIZE:-8} \
  KAFKA_BROKERS=127.0.0.1:$broker_port AUTH_JWKS_URL=http://127.0.0.1:$jwks_port/jwks.json LOG_LEVEL=warning \
  "$binary" >"$run/service.log" 2>&1 &
service_pid=$!
wait_port "$http_port" 30
sleep 1
base=http://127.0.0.1:$http_port
route="direct, no gateway"
if [ "${BENCH_DIRECT:-}" != 1 ]; then
  gateway_port=$(free_port)
  POSTLY_POSTS_PORT=$http_port gateway_config "$run/nginx" "$gateway_port"
  gateway_start "$run/nginx" "$gateway_port" "$run/gateway.log"
  base=http://127.0.0.1:$gateway_port
  route="through the gateway"
fi

report() {  # name wrk-output
  local rps p50 p99
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$2")
  p50=$(awk '$1=="50%"{print $2}' <<<"$2")
  p99=$(awk '$1=="99%"{print $2}' <<<"$2")
  errors=$(grep -E "Non-2xx|Socket errors" <<<"$2" | tr '\n' ' ' || true)
  printf '%-34s %10s req/s   p50 %-9s p99 %-9s %s\n' "$1" "$rps" "$p50" "$p99" "$errors"
  eval "${3}=$rps"
}

# BENCH_PROFILE=1: perf samples the service during each measurement; the top symbols follow it.
profile_start() {
  [ "${BENCH_PROFILE:-}" = 1 ] || return 0
  perf record -F 499 -g -p "$service_pid" -o "$run/perf.data" -- sleep "$seconds" >/dev/null 2>&1 &
  perf_pid=$!
}
profile_report() {
  [ "${BENCH_PROFILE:-}" = 1 ] || return 0
  wait "$perf_pid" || true
  echo "  where the service's time goes, by library:"
  { perf report -i "$run/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -12 || true; } | sed 's/^/  /'
  echo "  top symbols:"
  { perf report -i "$run/perf.data" --no-children --sort symbol --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' | head -"${BENCH_PROFILE_LINES:-15}" || true; } | cut -c1-150 | sed 's/^/  /' 
}

echo "posts service on 2 threads of wrk, $connections connections, ${seconds}s each ($route)"
profile_start
out=$(BENCH_TOKENS="$run/tokens.txt" wrk -t2 -c"$connections" -d"${seconds}s" --latency -s "$here/posts/create.lua" "$base/api/posts")
report "POST /api/posts (durable commits)" "$out" create_rps
profile_report
id=$(curl -s "$base/api/posts?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["posts"][0]["_id"])')
profile_start
out=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency "$base/api/posts/$id")
report "GET /api/posts/{id}" "$out" get_rps
profile_report
profile_start
out=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency "$base/api/posts?page=1&limit=10")
report "GET /api/posts?page=1&limit=10" "$out" feed_rps
profile_report

pg=$("$pg_bin/pgbench" -n -h 127.0.0.1 -p "$pg_port" -U postgres -M prepared -c "$connections" -j 2 -T "$seconds" \
  -D id="$id" -f "$here/posts/get-by-id.sql" postly_posts 2>&1)
pg_tps=$(awk '/^tps/{print $3; exit}' <<<"$pg")
printf '%-34s %10s tps\n' "pgbench: the same lookup, prepared" "$pg_tps"
python3 -c "print(f'GET by id / pgbench = {float($get_rps)/float($pg_tps):.2f}')"
