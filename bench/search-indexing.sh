#!/usr/bin/env bash
# Benchmarks how fast the search service indexes, on the suite that deploy/up.sh runs (start
# it first), through the gateway:
#   1. freshness: BENCH_CHANGES (200) new posts at a steady BENCH_RATE (50) a second sharing a
#      word of the run; each timed from its 201 to the first search that finds it (one search
#      every 10 ms); p50, p99 and max.
#   2. a backlog: with the service stopped, BENCH_BACKLOG (10000) posts sharing one word; then
#      the service is started again (same binary and environment) and timed until the word's
#      X-Total-Count holds them all: post events indexed per second from waiting events.
# BENCH_GATEWAY (http://127.0.0.1:8080) says where.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
root=$postly_root
gateway=${BENCH_GATEWAY:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}
pid_file="$root/.run/search.pid"

if ! curl -fs -o /dev/null --max-time 2 "$gateway/health/live" || [ ! -f "$pid_file" ]; then
  echo "search-indexing.sh: no suite at $gateway with $pid_file; start it with deploy/up.sh" >&2
  exit 1
fi

exec python3 "$here/search/indexing.py" "$gateway" "$pid_file"
