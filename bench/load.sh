#!/usr/bin/env bash
# A realistic mix through the gateway at rising concurrency: the whole suite (deploy/up.sh,
# release build, a fake Pexels of bench/images) seeded by the reference's seeder, then, at each
# level, one wrk per route at once with its share of the connections (feed 40 %, a post 30 %,
# a post's comments 10 %, search 10 %, cover images 5 %, creating a post 5 %) while
# BENCH_STREAMS (50) notification streams stay open. Prints, per level and route, answers per
# second, p50/p99 and errors, where the CPU went (postly_suite.measure), and each service's
# memory before and after.
#   bench/load.sh              LEVELS ("16 64 256"), DURATION (15 s), BENCH_STREAMS (50)
# Leaves the suite running (deploy/down.sh stops it). Needs wrk and ../shared/bench-reference.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
root=$postly_root
reference=${BENCH_REFERENCE:-$root/../shared/bench-reference}
levels=${LEVELS:-16 64 256} duration=${DURATION:-15} streams=${BENCH_STREAMS:-50}
gateway=http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}
scratch=$(mktemp -d /tmp/postly-load.XXXXXX)
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

pexels_port=$(free_port)
python3 -m postly_suite.fake_pexels "$pexels_port" >/dev/null 2>&1 &
pexels_pid=$!
stream_pid=
trap 'kill $pexels_pid $stream_pid 2>/dev/null || true; rm -rf "$scratch"' EXIT

# One address makes every request: the gateway's per-address limits raised for the seeder's 50
# registrations, the streams' logins and the streams themselves.
export POSTLY_GATEWAY_SIGNIN_BURST=${POSTLY_GATEWAY_SIGNIN_BURST:-$((streams + 100))}
export POSTLY_GATEWAY_STREAMS_PER_ADDRESS=${POSTLY_GATEWAY_STREAMS_PER_ADDRESS:-$((streams + 20))}
PEXELS_API_KEY=load-run-key PEXELS_BASE_URL=http://127.0.0.1:$pexels_port "$root/deploy/up.sh" >"$scratch/up.log" 2>&1 \
  || { tail -20 "$scratch/up.log"; exit 1; }
python3 "$reference/seed.py" "$gateway" "$scratch/seed.json" >&2
python3 "$reference/load/prepare.py" "$scratch/seed.json" "$scratch/data.lua"

memory() {
  for name in auth posts comments search images notifications; do
    printf '%s %s\n' "$name" "$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$(cat "$root/.run/$name.pid")/status")"
  done
}
memory >"$scratch/memory-before"

# Open streams as the app keeps them, one user each: held for the whole run.
# The levels start once every stream is open: the logins (bcrypt) are not part of the mix.
python3 "$here/load/streams.py" "$gateway" "$streams" "$scratch/seed.json" "$scratch/streams-open" &
stream_pid=$!
until [ -f "$scratch/streams-open" ]; do
  kill -0 "$stream_pid" 2>/dev/null || { echo "load.sh: the notification streams did not open" >&2; exit 1; }
  sleep 0.2
done

routes=(feed:40 post_by_id:30 comments:10 search:10 images:5 create_post:5)
printf '%-6s %-12s %10s %9s %9s %8s\n' level route "answers/s" "p50 ms" "p99 ms" errors
for level in $levels; do
  pids=()
  for entry in "${routes[@]}"; do
    route=${entry%%:*} share=${entry##*:}
    connections=$(( level * share / 100 )); [ "$connections" -ge 1 ] || connections=1
    script=$reference/load/$route.lua; [ -f "$here/load/$route.lua" ] && script=$here/load/$route.lua
    BENCH_DATA=$scratch/data.lua BENCH_COMMON=$reference/load/common.lua \
      wrk -t1 -c"$connections" -d"${duration}s" --timeout 30s -s "$script" "$gateway/" >"$scratch/$level-$route.txt" 2>&1 &
    pids+=($!)
  done
  python3 -m postly_suite.measure "$(( duration - 2 ))" >"$scratch/$level-cpu.txt" &
  wait "${pids[@]}" $!
  for entry in "${routes[@]}"; do
    route=${entry%%:*}
    python3 "$here/load/row.py" "$scratch/$level-$route.txt" "$level" "$route"
  done
  echo "       $(cat "$scratch/$level-cpu.txt")"
done
memory >"$scratch/memory-after"
echo
printf '%-15s %12s %12s\n' service "MiB before" "MiB after"
join "$scratch/memory-before" "$scratch/memory-after" | while read -r name before after; do
  printf '%-15s %12s %12s\n' "postly-$name" "$before" "$after"
done
