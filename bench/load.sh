#!/usr/bin/env bash
# A realistic mix through the gateway at rising concurrency: the whole suite (deploy/up.sh,
# release build, a fake Pexels of bench/images) seeded by the reference's seeder, then, at each
# level, one wrk per route at once with its share of the connections (feed 40 %, a post 30 %,
# a post's comments 10 %, search 10 %, cover images 5 %, creating a post 5 %) while
# BENCH_STREAMS (50) notification streams stay open. Prints, per level and route, answers per
# second, p50/p99 and errors, where the CPU went (bench/cpu_shares.py), and each service's
# memory before and after.
#   bench/load.sh              LEVELS ("16 64 256"), DURATION (15 s), BENCH_STREAMS (50)
# Leaves the suite running (deploy/down.sh stops it). Needs wrk and ../shared/bench-reference.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
reference=${BENCH_REFERENCE:-$root/../shared/bench-reference}
levels=${LEVELS:-16 64 256} duration=${DURATION:-15} streams=${BENCH_STREAMS:-50}
gateway=http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}
scratch=$(mktemp -d /tmp/postly-load.XXXXXX)
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

pexels_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$here/images/fake_pexels.py" "$pexels_port" >/dev/null 2>&1 &
pexels_pid=$!
stream_pid=
trap 'kill $pexels_pid $stream_pid 2>/dev/null || true; rm -rf "$scratch"' EXIT

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
python3 - "$gateway" "$streams" "$scratch/seed.json" "$scratch/streams-open" <<'PY' &
import http.client, json, sys, threading, time, urllib.parse
gateway, count, seed = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
opened = threading.Semaphore(0)
host, port = urllib.parse.urlsplit(gateway).hostname, urllib.parse.urlsplit(gateway).port
def login(user):
    connection = http.client.HTTPConnection(host, port)
    connection.request("POST", "/api/auth/login/email", json.dumps({"email": user["email"], "password": user["password"]}), {"Content-Type": "application/json"})
    return json.loads(connection.getresponse().read())["accessToken"]
def hold(token):
    connection = http.client.HTTPConnection(host, port, timeout=3600)
    connection.request("GET", "/api/notifications/stream", headers={"Authorization": "Bearer " + token})
    response = connection.getresponse()
    opened.release()
    while response.fp.readline():
        pass
tokens = [login(seed["users"][i % len(seed["users"])]) for i in range(count)]
for token in tokens:
    threading.Thread(target=hold, args=(token,), daemon=True).start()
for _ in tokens:
    opened.acquire()
open(sys.argv[4], "w").close()
time.sleep(86400)
PY
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
  python3 "$here/cpu_shares.py" "$(( duration - 2 ))" >"$scratch/$level-cpu.txt" &
  wait "${pids[@]}" $!
  for entry in "${routes[@]}"; do
    route=${entry%%:*}
    python3 - "$scratch/$level-$route.txt" "$level" "$route" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
line = next((l for l in text.splitlines() if l.startswith("BENCH_RESULT ")), None)
if line is None:
    print(f"{sys.argv[2]:<6} {sys.argv[3]:<12} no result: {text.strip()[-200:]}")
    sys.exit()
r = json.loads(line[len("BENCH_RESULT "):])
seconds = r["duration_us"] / 1e6
errors = r["status_errors"] + r["socket_errors"] + r["timeouts"]
print(f"{sys.argv[2]:<6} {sys.argv[3]:<12} {(r['requests'] - r['status_errors']) / seconds:10.1f} {r['p50_us'] / 1000:9.1f} {r['p99_us'] / 1000:9.1f} {errors:8d}")
PY
  done
  echo "       $(cat "$scratch/$level-cpu.txt")"
done
memory >"$scratch/memory-after"
echo
printf '%-15s %12s %12s\n' service "MiB before" "MiB after"
join "$scratch/memory-before" "$scratch/memory-after" | while read -r name before after; do
  printf '%-15s %12s %12s\n' "postly-$name" "$before" "$after"
done
