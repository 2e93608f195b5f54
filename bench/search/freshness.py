"""bench/search-freshness.sh's measurement, on a running suite through its gateway: search's
freshness under a burst of writes. BENCH_WRITERS (8) accounts create published posts of about
600 words, together BENCH_RATE a second (0: each as fast as it is answered), while
BENCH_READERS (8) read the feed and the posts created; meanwhile a probe publishes a post a
second with a word of its own and polls search (every 10 ms) until it is found. Only probes
published during the burst count: a probe slot that passed while the last probe was still
being looked for is skipped, not made up for afterwards on an idle suite. Prints the writes
and reads a second and the probe's delays, 201 to found: p50, p99, max, and how many were
never found (within 10 s). With BENCH_PG_PORT (the suite's PostgreSQL) it also prints
where the probes' time went: from the 201 to the outbox relay's send (the posts database's
`outbox.sent_at`), to search's consumer starting the batch that stored it (the search
database's `changes.at`), to that batch's commit (where `track_commit_timestamp` is on), and
from there to found.
usage: freshness.py GATEWAY_URL   (BENCH_SECONDS 60, BENCH_WRITERS, BENCH_RATE, BENCH_READERS, BENCH_PG_PORT)"""
import os
import random
import sys
import threading
import time

from postly_suite import lib
from postly_suite.client import Client, unique_word
from postly_suite.measure import percentile

gateway = Client.at(sys.argv[1])
seconds = float(os.environ.get("BENCH_SECONDS", "60"))
writers = int(os.environ.get("BENCH_WRITERS", "8"))
rate = float(os.environ.get("BENCH_RATE", "0"))
readers = int(os.environ.get("BENCH_READERS", "8"))

vocabulary = [unique_word()[:random.randint(3, 9)] for _ in range(3000)]
tokens = [gateway.register(f"Writer {n}")["accessToken"] for n in range(writers + 1)]
created, counts, lock = [], {"writes": 0, "reads": 0, "errors": 0}, threading.Lock()
stop = time.monotonic() + seconds


def count(kind):
    with lock:
        counts[kind] += 1


def write(token):
    next_at = time.monotonic()
    while time.monotonic() < stop:
        if rate > 0:
            time.sleep(max(0, next_at - time.monotonic()))
            next_at += writers / rate
        text = " ".join(random.choices(vocabulary, k=600))
        answer = gateway.call("POST", "/api/posts", token, {"title": " ".join(random.choices(vocabulary, k=6)), "content": text, "status": "published"})
        if answer.status == 201:
            count("writes")
            with lock:
                created.append(answer.body["_id"])
        else:
            count("errors")


def read():
    while time.monotonic() < stop:
        with lock:
            post = random.choice(created) if created else None
        path = f"/api/posts/{post}" if post and random.random() < 0.5 else "/api/posts?page=1&limit=10"
        count("reads" if gateway.call("GET", path).status == 200 else "errors")


delays, missing, probes = [], 0, []  # probes: (post id, wall clock at its 201, at found)


def probe():
    global missing
    token, next_at = tokens[-1], time.monotonic() + 1
    while max(next_at, time.monotonic()) < stop:
        time.sleep(max(0, next_at - time.monotonic()))
        next_at = max(next_at + 1, time.monotonic())
        word = unique_word()
        post = gateway.call_or_exit("POST", "/api/posts", token, {"title": f"Probe {word}", "content": "A post to find at once.", "status": "published"})
        published, published_wall = time.monotonic(), time.time()
        while time.monotonic() - published < 10:
            ids, _ = gateway.search(word, limit=1)
            if ids:
                delays.append((time.monotonic() - published) * 1000)
                probes.append((post["_id"], published_wall, time.time()))
                break
            time.sleep(0.01)
        else:
            missing += 1


threads = [threading.Thread(target=write, args=(tokens[n],)) for n in range(writers)]
threads += [threading.Thread(target=read) for _ in range(readers)] + [threading.Thread(target=probe)]
began = time.monotonic()
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.monotonic() - began
print(f"{writers} writers: {counts['writes'] / elapsed:.1f} posts of 600 words a second; {readers} readers: "
      f"{counts['reads'] / elapsed:.0f} reads a second; {counts['errors']} errors; {elapsed:.0f} s")
if delays:
    print(f"probe (a post a second, 201 -> found by search through the gateway): {len(delays)} found, p50 "
          f"{percentile(delays, 0.5):.0f} ms, p99 {percentile(delays, 0.99):.0f} ms, max {max(delays):.0f} ms; {missing} missing")
else:
    print(f"probe: none found; {missing} missing")


def stage_times(port, database, sql, ids):
    """{post id: Unix time} from one statement of ids and times; `sql` reads the ids as
    `:'ids'::text[]`."""
    array = "{" + ",".join('"' + i.replace("\\", "\\\\").replace('"', '\\"') + '"' for i in ids) + "}"
    rows = [line.split("|") for line in lib.psql(port, database, sql, ids=array) if line.strip()]
    return {post: float(at) for post, at in rows}


port = os.environ.get("BENCH_PG_PORT")
if port and probes:
    ids = [post for post, _, _ in probes]
    sent = stage_times(port, "postly_posts", "SELECT key, extract(epoch FROM min(sent_at)) FROM outbox WHERE topic = 'postly.posts' AND key = ANY(:'ids'::text[]) GROUP BY key", ids)
    stored = stage_times(port, "postly_search", "SELECT post_id, extract(epoch FROM min(at)) FROM changes WHERE post_id = ANY(:'ids'::text[]) GROUP BY post_id", ids)
    # The commit of that batch, where PostgreSQL keeps commit times (track_commit_timestamp).
    committed = stage_times(port, "postly_search", """
        SELECT post_id, extract(epoch FROM min(pg_xact_commit_timestamp(xmin))) FROM changes
        WHERE post_id = ANY(:'ids'::text[]) AND current_setting('track_commit_timestamp')::bool GROUP BY post_id""", ids)
    stages = {"201 to sent": [], "sent to stored": [], "stored to committed": [], "committed to found": []}
    for post, answered, found in probes:
        if post in sent and post in stored:
            stages["201 to sent"].append((sent[post] - answered) * 1000)
            stages["sent to stored"].append((stored[post] - sent[post]) * 1000)
            if post in committed:
                stages["stored to committed"].append((committed[post] - stored[post]) * 1000)
                stages["committed to found"].append((found - committed[post]) * 1000)
    for stage, values in stages.items():
        if values:
            print(f"  {stage}: p50 {percentile(values, 0.5):.0f} ms, p99 {percentile(values, 0.99):.0f} ms, max {max(values):.0f} ms ({len(values)} probes)")
