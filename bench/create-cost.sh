#!/usr/bin/env bash
# What a create costs the whole machine, program by program: the service, PostgreSQL (every
# database's work, the consumers' included), the broker and each consumer. Creates through the
# gateway for SECONDS_OF_LOAD (10) at 64 connections, then SETTLE seconds (4) for the consumers to
# finish, every process's CPU time read from /proc before and after; ROUNDS (3) times. Needs a
# running suite that compare.sh has seeded (deploy/up.sh, release build).
#   bench/create-cost.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
reference=${BENCH_REFERENCE:-$postly_root/../shared/bench-reference}
seed=$(ls -t /var/tmp/bench/seed/*8080*.json 2>/dev/null | head -1)
[ -n "$seed" ] || { echo "no seed file of the suite: run compare.sh first" >&2; exit 1; }
data=$(mktemp /tmp/postly-create.XXXXXX.lua)
trap 'rm -f "$data"' EXIT
python3 "$reference/load/prepare.py" "$seed" "$data"

BENCH_DATA=$data SCRIPT=$reference/load/create_post.lua GATEWAY=http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}/ python3 - <<'PY'
import os, subprocess, time
from postly_suite.measure import cpu_by_process, cpu_seconds_by_program, wrk_result

seconds, settle, rounds = int(os.environ.get("SECONDS_OF_LOAD", 10)), int(os.environ.get("SETTLE", 4)), int(os.environ.get("ROUNDS", 3))
for number in range(1, rounds + 1):
    before = cpu_by_process()
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{seconds}s", "--timeout", "30s", "-s", os.environ["SCRIPT"], os.environ["GATEWAY"]],
                         capture_output=True, text=True, check=True).stdout
    time.sleep(settle)
    result = wrk_result(out)
    creates = result["requests"] - result["status_errors"]
    if creates == 0:
        raise SystemExit(f"no create succeeded ({result['status_errors']} refused): the seed's tokens are not this suite's; run compare.sh to seed it")
    used = cpu_seconds_by_program(before, cpu_by_process())
    per_create = {name: cpu * 1000 / creates for name, cpu in used.items()}
    busy = sorted((name for name, ms in per_create.items() if ms >= 0.05), key=per_create.get, reverse=True)
    print(f"round {number}: {creates / seconds:.0f} creates/s, {sum(per_create.values()):.2f} ms of CPU a create: "
          + ", ".join(f"{name} {per_create[name]:.2f}" for name in busy))
PY
