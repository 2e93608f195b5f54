"""bench/notifications.sh's measurements, on a running suite: comment-to-stream latency
through the gateway, idle streams on the service's own port, then a backlog notified after a
restart.
usage: delivery.py GATEWAY_URL SERVICE_URL PID_FILE
       (BENCH_COMMENTS, BENCH_STREAMS, BENCH_IDLE_SECONDS, BENCH_BACKLOG)"""
import concurrent.futures
import json
import os
import socket
import sys
import time
import urllib.parse
import uuid

from postly_suite.client import Client
from postly_suite.measure import percentile, process_sample
from postly_suite.suite import RunningService, eventually

gateway, service = Client.at(sys.argv[1]), sys.argv[2]
notifications = RunningService(sys.argv[3])
comments = int(os.environ.get("BENCH_COMMENTS", "200"))
streams = int(os.environ.get("BENCH_STREAMS", "1000"))
idle_seconds = float(os.environ.get("BENCH_IDLE_SECONDS", "30"))
backlog = int(os.environ.get("BENCH_BACKLOG", "10000"))
call = gateway.call_or_exit

# 1. Comment to stream, through the gateway.
author, reader = gateway.register("Bench Author")["accessToken"], gateway.register("Bench Reader")["accessToken"]
post = call("POST", "/api/posts", author, {"title": f"Bench {uuid.uuid4().hex[:8]}", "content": "Bench post", "status": "published"})
stream = gateway.stream("/api/notifications/stream", author, timeout=30)
if stream.status != 200:
    sys.exit(f"the stream answered {stream.status}")


arrivals, read = {}, 0


def arrival(comment_id):
    """When the comment's notification reached the stream, or None. Reads only the events
    that came since the last look: the stream's reader thread stamps each arrival and must not
    wait for this one."""
    global read
    for event in stream.events[read:]:
        arrivals[json.loads(event["data"]).get("commentId")] = event["received"]
        read += 1
    return arrivals.get(comment_id)


# A first comment, not timed, once the comments service knows the post.
first = call("POST", f"/api/posts/{post['_id']}/comments", reader, {"content": "First"}, patience=10)
latencies = []
for index in range(comments):
    comment = call("POST", f"/api/posts/{post['_id']}/comments", reader, {"content": f"Comment {index}"})
    acknowledged = time.monotonic()
    arrived, _ = eventually(10, lambda: arrival(comment["_id"]))
    if arrived is None:
        sys.exit(f"comment {index} did not reach the stream within 10 s")
    latencies.append((arrived - acknowledged) * 1000)
print(f"comment acknowledged -> event on the stream, {len(latencies)} comments through the gateway: "
      f"p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms, max {max(latencies):.1f} ms")

# 2. Idle streams on the service's own port.
cpu_before, rss_before = process_sample(notifications.pid)
time.sleep(idle_seconds)
cpu_after, rss_idle = process_sample(notifications.pid)
idle_cpu = (cpu_after - cpu_before) / idle_seconds * 100
url = urllib.parse.urlsplit(service)
sockets = []
request = (f"GET /api/notifications/stream HTTP/1.1\r\nHost: {url.hostname}\r\nAuthorization: Bearer {author}\r\n"
           "Accept: text/event-stream\r\n\r\n").encode()
for _ in range(streams):
    s = socket.create_connection((url.hostname, url.port), timeout=10)
    s.sendall(request)
    head = s.recv(4096)
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit(f"stream {len(sockets)} answered {head[:40]!r}")
    sockets.append(s)
time.sleep(2)
cpu_before, rss_open = process_sample(notifications.pid)
time.sleep(idle_seconds)
cpu_after, rss_held = process_sample(notifications.pid)
held_cpu = (cpu_after - cpu_before) / idle_seconds * 100
print(f"{streams} idle streams: RSS {rss_idle:.1f} MiB without them, {rss_held:.1f} MiB with them "
      f"({(rss_held - rss_idle) * 1024 / streams:.1f} KiB a stream); "
      f"CPU {idle_cpu:.2f}% of a core without them, {held_cpu:.2f}% with them (over {idle_seconds:.0f} s)")
for s in sockets:
    s.close()

# 3. Notifications created per second when events wait.
unread_before = call("GET", "/api/notifications?limit=1", author)["unreadCount"]
notifications.stop()
posts = [call("POST", "/api/posts", author, {"title": f"Backlog {i} {uuid.uuid4().hex[:6]}", "content": "Bench", "status": "published"})["_id"]
         for i in range(100)]
call("POST", f"/api/posts/{posts[-1]}/comments", reader, {"content": "known?"}, patience=10)


def write_comment(index):
    call("POST", f"/api/posts/{posts[index % len(posts)]}/comments", reader, {"content": f"Backlog {index}"}, patience=10)


started = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(write_comment, range(backlog - 1)))
print(f"{backlog} comments written through the gateway in {time.monotonic() - started:.1f} s while notifications was stopped")
notifications.start()
started = time.monotonic()
expected = unread_before + backlog
while True:
    try:
        unread = call("GET", "/api/notifications?limit=1", author)["unreadCount"]
    except SystemExit:
        unread = 0  # still starting
    if unread >= expected:
        break
    if time.monotonic() - started > 300:
        sys.exit(f"only {unread - unread_before} of {backlog} notifications after 300 s")
    time.sleep(0.1)
elapsed = time.monotonic() - started
print(f"{backlog} waiting comment events -> notifications in {elapsed:.1f} s from the restart: {backlog / elapsed:.0f} a second")
