#!/usr/bin/env bash
# Where the machine's CPU goes in the realistic mix (the reference's load/mix.lua: the feed 45 %,
# a post 35 %, search 15 %, a create 5 %), on a running suite that compare.sh has seeded
# (deploy/up.sh, release build): a SECONDS-long wrk load through the gateway (20 s, 64
# connections) while each program's cores are read from /proc over its middle (postly_suite.measure).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
reference=${BENCH_REFERENCE:-$postly_root/../shared/bench-reference}
seconds=${SECONDS_OF_LOAD:-20}
gateway=http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}
seed=$(ls -t /var/tmp/bench/seed/*8080*.json 2>/dev/null | head -1)
[ -n "$seed" ] || { echo "no seed file of the suite: run compare.sh first" >&2; exit 1; }
data=$(mktemp /tmp/postly-mix.XXXXXX.lua)
trap 'rm -f "$data"' EXIT
python3 "$reference/load/prepare.py" "$seed" "$data"
BENCH_DATA=$data BENCH_COMMON=$reference/load/common.lua wrk -t2 -c64 -d"${seconds}s" -s "$reference/load/mix.lua" "$gateway/" \
  | grep -E "Requests/sec|Latency|Non-2xx" &
load=$!
sleep "$((seconds / 4))"
(cd "$postly_root/deploy" && python3 -m postly_suite.measure "$((seconds / 2))")
wait "$load"
