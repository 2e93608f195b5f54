#!/usr/bin/env bash
# Benchmarks the images service (release build) against a fake Pexels of its own
# (postly_suite.fake_pexels): cache-hit answers per second and p50/p99 with wrk, direct
# and through the gateway, then the memory a full cache holds at its default bounds
# (10,000 entries, 64 MiB), filled with distinct questions.
# BENCH_SECONDS (10) per measurement, BENCH_CONNECTIONS (64), BENCH_FILL (10,500 questions),
# BENCH_PER_PAGE (6, what the app asks), BENCH_CONFIGURATION (release; debug only to check
# that the script runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
seconds=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}
fill=${BENCH_FILL:-10500}
per_page=${BENCH_PER_PAGE:-6}
configuration=${BENCH_CONFIGURATION:-release}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

run=$(mktemp -d /tmp/postly-images-bench.XXXXXX)
chmod 755 "$run"
service_pid=
jwks_pid=
pexels_pid=
cleanup() {
  gateway_stop "$run/nginx"
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  [ -n "$jwks_pid" ] && kill "$jwks_pid" 2>/dev/null || true
  [ -n "$pexels_pid" ] && kill "$pexels_pid" 2>/dev/null || true
  broker_stop "$run/broker"
  rm -rf "$run"
}
trap cleanup EXIT

broker_port=$(free_port); http_port=$(free_port); jwks_port=$(free_port); pexels_port=$(free_port)
# The broker carries session revocations; the service has no database.
broker_start "$run/broker" "$broker_port"
python3 -m postly_suite.tokens "$run" 1
token=$(head -1 "$run/tokens.txt")
(cd "$run" && exec python3 -m http.server "$jwks_port" --bind 127.0.0.1 >/dev/null 2>&1) &
jwks_pid=$!
python3 -m postly_suite.fake_pexels "$pexels_port" &
pexels_pid=$!

cd "$postly_root"
scratch=.build; [ "$configuration" = release ] && scratch=.build-release
swift build -c "$configuration" --scratch-path "$scratch" --product postly-images >/dev/null
binary="$(swift build -c "$configuration" --scratch-path "$scratch" --show-bin-path)/postly-images"
PORT=$http_port KAFKA_BROKERS=127.0.0.1:$broker_port AUTH_JWKS_URL=http://127.0.0.1:$jwks_port/jwks.json LOG_LEVEL=warning \
  PEXELS_BASE_URL=http://127.0.0.1:$pexels_port PEXELS_API_KEY=bench-key \
  PEXELS_HOURLY_LIMIT=1000000 PEXELS_MONTHLY_LIMIT=1000000 IMAGES_USER_HOURLY_MISSES=1000000 \
  "$binary" >"$run/service.log" 2>&1 &
service_pid=$!
wait_port "$http_port" 30
wait_port "$pexels_port" 10
direct=http://127.0.0.1:$http_port
gateway_port=$(free_port)
POSTLY_IMAGES_PORT=$http_port gateway_config "$run/nginx" "$gateway_port"
gateway_start "$run/nginx" "$gateway_port" "$run/gateway.log"
gateway=http://127.0.0.1:$gateway_port

report() {  # name wrk-output
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$2")
  p50=$(awk '$1=="50%"{print $2}' <<<"$2")
  p99=$(awk '$1=="99%"{print $2}' <<<"$2")
  errors=$(grep -E "Non-2xx|Socket errors" <<<"$2" | tr '\n' ' ' || true)
  printf '%-40s %10s req/s   p50 %-9s p99 %-9s %s\n' "$1" "$rps" "$p50" "$p99" "$errors"
}

rss_kib() { awk '/^VmRSS/{print $2}' "/proc/$service_pid/status"; }
metric() { curl -fsS "$direct/metrics" | awk -v name="$1" '$1==name{printf "%d", $2}'; }

# Wait until the service verifies tokens (it fetches the keys at start), then warm one entry.
path="/api/images/search?query=mountain%20lake&per_page=$per_page"
for _ in $(seq 1 50); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$direct$path")" = 200 ] && break
  sleep 0.2
done
echo "images service ($configuration), cache hits, 2 wrk threads, $connections connections, ${seconds}s each"
out=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" "$direct$path")
report "GET $path (direct)" "$out"
out=$(wrk -t2 -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" "$gateway$path")
report "GET $path (gateway)" "$out"

echo "filling the cache with $fill distinct questions (per_page=$per_page)"
before=$(rss_kib)
seq 1 "$fill" | xargs -P 8 -I{} curl -s -o /dev/null -H "Authorization: Bearer $token" \
  "$direct/api/images/search?query=fill%20{}&per_page=$per_page"
after=$(rss_kib)
printf 'cache: %s entries, %s bytes by its own count; resident memory %s MiB before, %s MiB after (+%s MiB)\n' \
  "$(metric images_cache_entries)" "$(metric images_cache_bytes)" \
  "$((before / 1024))" "$((after / 1024))" "$(((after - before) / 1024))"
