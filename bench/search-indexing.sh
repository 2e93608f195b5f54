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
root=$(cd "$here/.." && pwd)
gateway=${BENCH_GATEWAY:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}
pid_file="$root/.run/search.pid"

if ! curl -fs -o /dev/null --max-time 2 "$gateway/health/live" || [ ! -f "$pid_file" ]; then
  echo "search-indexing.sh: no suite at $gateway with $pid_file; start it with deploy/up.sh" >&2
  exit 1
fi

exec python3 - "$gateway" "$pid_file" "$here" <<'PY'
import concurrent.futures, json, os, random, string, sys, threading, time, urllib.parse
sys.path.insert(0, sys.argv[3])
from suite_client import Gateway, RunningService, percentile

gateway, search = Gateway(sys.argv[1]), RunningService(sys.argv[2])
changes = int(os.environ.get("BENCH_CHANGES", "200"))
rate = float(os.environ.get("BENCH_RATE", "50"))
backlog = int(os.environ.get("BENCH_BACKLOG", "10000"))

def unique_word():
    """A word nothing else contains, nor comes within search's two typos of."""
    return "".join(random.choices(string.ascii_lowercase, k=12))

def total_found(word):
    """X-Total-Count of a search for `word`, or None while search does not answer."""
    conn = gateway.connection()
    try:
        conn.request("GET", f"/api/posts/search?q={urllib.parse.quote(word)}&limit=1")
        response = conn.getresponse()
        response.read()
        return int(response.getheader("X-Total-Count", "0")) if response.status == 200 else None
    except OSError:
        return None
    finally:
        conn.close()

author = gateway.register("Bench Author")

# 1. Time to searchable under a steady rate of changes. The posts share a word of this run and
# only it, so one search (newest first among equals) shows which of them are indexed; a
# single poller, so the measuring does not load the service it measures.
word = unique_word()
acknowledged, found = {}, {}
def poll(until):
    while time.monotonic() < until and len(found) < changes:
        conn = gateway.connection()
        conn.request("GET", f"/api/posts/search?q={word}&page=1&limit=100")
        response = conn.getresponse()
        body = response.read()
        conn.close()
        now = time.monotonic()
        if response.status == 200:
            for post in json.loads(body):
                found.setdefault(post["_id"], now)
        time.sleep(0.01)

began = time.monotonic()
poller = threading.Thread(target=poll, args=(began + changes / rate + 10,))
poller.start()
for index in range(changes):
    time.sleep(max(0, began + index / rate - time.monotonic()))
    post = gateway.call("POST", "/api/posts", {"title": f"Fresh {word} {index}", "content": "A post to find at once.", "status": "published"}, author)
    acknowledged[post["_id"]] = time.monotonic()
poller.join()
latencies = [(found[post] - at) * 1000 for post, at in acknowledged.items() if post in found]
if len(latencies) < changes:
    sys.exit(f"{changes - len(latencies)} of {changes} posts were not searchable within 10 s")
print(f"post created (201) -> found by search, {changes} posts at {rate:.0f} a second through the gateway "
      f"(one search every 10 ms): p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms")

# 2. Post events indexed per second when they wait. (BENCH_BACKLOG=0 skips it)
if not backlog:
    sys.exit()
word = unique_word()
search.stop()
def create(index):
    gateway.call("POST", "/api/posts", {"title": f"Backlog {index}", "content": f"Waiting to be indexed: {word}.", "status": "published"}, author)
started = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(create, range(backlog)))
print(f"{backlog} posts written through the gateway in {time.monotonic() - started:.1f} s while search was stopped")
search.start()
started = time.monotonic()
while (found := total_found(word) or 0) < backlog:
    if time.monotonic() - started > 600:
        sys.exit(f"only {found} of {backlog} posts searchable after 600 s")
    time.sleep(0.1)
elapsed = time.monotonic() - started
print(f"{backlog} waiting post events -> searchable in {elapsed:.1f} s from the restart: {backlog / elapsed:.0f} a second")
PY
