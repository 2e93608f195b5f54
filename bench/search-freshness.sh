#!/usr/bin/env bash
# Search's freshness under a burst of writes, on the suite that deploy/up.sh runs (start it
# first), through the gateway: bench/search/freshness.py (writers of 600-word posts, readers,
# a probe publishing a post a second and polling search for it). BENCH_GATEWAY
# (http://127.0.0.1:8080), BENCH_SECONDS (60), BENCH_WRITERS (8), BENCH_RATE (their posts a
# second in all; 0, the default: each as fast as it is answered), BENCH_READERS (8).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
gateway=${BENCH_GATEWAY:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}
curl -fs -o /dev/null --max-time 2 "$gateway/health/live" || { echo "search-freshness.sh: no suite at $gateway; start it with deploy/up.sh" >&2; exit 1; }
BENCH_PG_PORT=${BENCH_PG_PORT:-${POSTLY_POSTGRES_PORT:-5433}} exec python3 "$here/search/freshness.py" "$gateway"
