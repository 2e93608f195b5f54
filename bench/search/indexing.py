"""bench/search-indexing.sh's measurements, on a running suite through its gateway:
freshness under a steady rate of new posts, then a backlog indexed after a restart.
usage: indexing.py GATEWAY_URL SEARCH_PID_FILE   (BENCH_CHANGES, BENCH_RATE, BENCH_BACKLOG)"""
import concurrent.futures
import os
import sys
import threading
import time

from postly_suite.client import Client, unique_word
from postly_suite.measure import percentile
from postly_suite.suite import RunningService

gateway, search = Client.at(sys.argv[1]), RunningService(sys.argv[2])
changes = int(os.environ.get("BENCH_CHANGES", "200"))
rate = float(os.environ.get("BENCH_RATE", "50"))
backlog = int(os.environ.get("BENCH_BACKLOG", "10000"))


def total_found(word):
    """X-Total-Count of a search for `word`, or None while search does not answer."""
    try:
        ids, total = gateway.search(word, limit=1)
    except OSError:
        return None
    return total if ids is not None else None


author = gateway.register("Bench Author")["accessToken"]

# 1. Time to searchable under a steady rate of changes. The posts share a word of this run and
# only it, so one search (newest first among equals) shows which of them are indexed; a
# single poller, so the measuring does not load the service it measures.
word = unique_word()
acknowledged, found = {}, {}


def poll(until):
    while time.monotonic() < until and len(found) < changes:
        ids, _ = gateway.search(word)
        now = time.monotonic()
        for post in ids or []:
            found.setdefault(post, now)
        time.sleep(0.01)


began = time.monotonic()
poller = threading.Thread(target=poll, args=(began + changes / rate + 10,))
poller.start()
for index in range(changes):
    time.sleep(max(0, began + index / rate - time.monotonic()))
    post = gateway.call_or_exit("POST", "/api/posts", author, {"title": f"Fresh {word} {index}", "content": "A post to find at once.", "status": "published"})
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
    gateway.call_or_exit("POST", "/api/posts", author, {"title": f"Backlog {index}", "content": f"Waiting to be indexed: {word}.", "status": "published"})


started = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(create, range(backlog)))
print(f"{backlog} posts written through the gateway in {time.monotonic() - started:.1f} s while search was stopped")
search.start()
started = time.monotonic()
while (total := total_found(word) or 0) < backlog:
    if time.monotonic() - started > 600:
        sys.exit(f"only {total} of {backlog} posts searchable after 600 s")
    time.sleep(0.1)
elapsed = time.monotonic() - started
print(f"{backlog} waiting post events -> searchable in {elapsed:.1f} s from the restart: {backlog / elapsed:.0f} a second")
