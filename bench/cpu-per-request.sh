#!/usr/bin/env bash
# CPU per request of each hot scenario, in the service that answers it and in PostgreSQL, on
# a running suite that compare.sh has seeded (deploy/up.sh, release build): for each scenario
# a SECONDS-long wrk load (10 s, 64 connections, through the gateway) while the service's and
# every PostgreSQL process's CPU time is read from /proc before and after.
#   bench/cpu-per-request.sh [SCENARIO...]   (post_by_id feed comments create_post)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
root=$postly_root
reference=${BENCH_REFERENCE:-$root/../shared/bench-reference}
seconds=${SECONDS_PER_SCENARIO:-10}
gateway=http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}
run=${POSTLY_RUN_DIR:-$root/.run}
seed=$(ls -t /var/tmp/bench/seed/*8080*.json 2>/dev/null | head -1)
[ -n "$seed" ] || { echo "no seed file of the suite: run compare.sh first" >&2; exit 1; }
data=$(mktemp /tmp/postly-cpu.XXXXXX.lua)
trap 'rm -f "$data"' EXIT
python3 "$reference/load/prepare.py" "$seed" "$data"
ticks=$(getconf CLK_TCK)

cpu_of() {  # pids... -> CPU ticks (user + system) so far
  python3 -c 'import sys; from postly_suite.measure import cpu_ticks; print(cpu_ticks(sys.argv[1:]))' "$@"
}

printf '%-12s %10s %18s %18s\n' scenario "answers/s" "service ms/request" "PostgreSQL ms/req"
for scenario in "${@:-post_by_id feed comments create_post}"; do
  for name in $scenario; do
    service=posts script=$reference/load/$name.lua
    [ "$name" = comments ] && service=comments script=$here/load/comments.lua
    service_pid=$(cat "$run/$service.pid")
    mapfile -t pg_pids < <(pgrep -u postgres postgres)
    service_before=$(cpu_of "$service_pid") pg_before=$(cpu_of "${pg_pids[@]}")
    out=$(BENCH_DATA=$data BENCH_COMMON=$reference/load/common.lua wrk -t2 -c64 -d"${seconds}s" -s "$script" "$gateway/")
    mapfile -t pg_pids < <(pgrep -u postgres postgres)
    service_after=$(cpu_of "$service_pid") pg_after=$(cpu_of "${pg_pids[@]}")
    requests=$(python3 -c 'import sys; from postly_suite.measure import wrk_result; print(wrk_result(sys.stdin.read())["requests"])' <<<"$out")
    python3 - "$name" "$requests" "$seconds" "$((service_after - service_before))" "$((pg_after - pg_before))" "$ticks" <<'PY'
import sys
name, requests, seconds, service, pg, ticks = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
print(f"{name:<12} {requests / seconds:10.0f} {service / ticks * 1000 / requests:18.2f} {pg / ticks * 1000 / requests:18.2f}")
PY
  done
done
