#!/usr/bin/env bash
# Each service's time from exec to ready and its memory when idle, on a running suite
# (deploy/up.sh): every service is stopped and started again alone, with the same environment
# up.sh gave it, and timed until /health/ready answers 200; its memory is read IDLE_SECONDS (5)
# after that: RSS (which counts the shared Swift, Foundation and C libraries in full in every
# process), PSS (shared pages divided among the processes using them) and its own anonymous
# memory. Prints a table. Leaves each service running as up.sh started it.
#   bench/startup.sh            (POSTLY_RUN_DIR as up.sh's, default .run)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
run=${POSTLY_RUN_DIR:-$postly_root/.run}
idle=${IDLE_SECONDS:-5}
configuration=${POSTLY_BUILD_CONFIGURATION:-release}
bin_dir=$(cd "$postly_root" && swift build -c "$configuration" --show-bin-path)

printf '%-22s %14s %10s %10s %12s\n' service "exec to ready" "RSS MiB" "PSS MiB" "private MiB"
mapfile -t services < <(declared_services)
for name in "${services[@]}"; do
  pid=$(cat "$run/$name.pid")
  # up.sh's subshell exec'd the binary, so the pid is the service's own.
  mapfile -d '' environment <"/proc/$pid/environ"
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  port=$(service_port "$name")
  start=$(date +%s.%N)
  env -i "${environment[@]}" "$bin_dir/postly-$name" >>"$run/logs/$name.log" 2>&1 &
  new_pid=$!
  echo "$new_pid" >"$run/$name.pid"
  until curl -fs -o /dev/null --max-time 0.2 "http://127.0.0.1:$port/health/ready"; do sleep 0.01; done
  ready=$(date +%s.%N)
  sleep "$idle"
  read -r rss pss anon < <(awk '/^Rss:/ {r = $2} /^Pss:/ {p = $2} /^Anonymous:/ {a = $2} END {print r / 1024, p / 1024, a / 1024}' "/proc/$new_pid/smaps_rollup")
  printf '%-22s %12.3f s %10.1f %10.1f %12.1f\n' "postly-$name" "$(echo "$ready - $start" | bc -l)" "$rss" "$pss" "$anon"
done
