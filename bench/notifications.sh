#!/usr/bin/env bash
# Benchmarks the notifications service on the suite that deploy/up.sh runs (start it first):
#   1. latency: a second user comments on the first user's post BENCH_COMMENTS times (200), one
#      at a time, through the gateway; each is timed from the comment's 201 to its event on the
#      first user's open stream (also through the gateway); p50, p99 and max.
#   2. idle streams: BENCH_STREAMS (1000) streams held open on the service's own port (the
#      gateway's 1024 worker connections cannot carry 2 x 1000), and the service's memory
#      (RSS) and CPU over BENCH_IDLE_SECONDS (30) before and while they are open.
#   3. a backlog: with the service stopped, BENCH_BACKLOG (10000) comments on 100 of the first
#      user's posts through the gateway; then the service is started again (same binary and
#      environment) and timed until the first user's unread count holds them all: notifications
#      created per second from waiting events.
# BENCH_GATEWAY (http://127.0.0.1:8080) and BENCH_SERVICE (http://127.0.0.1:8086) say where.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
gateway=${BENCH_GATEWAY:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}
service=${BENCH_SERVICE:-http://127.0.0.1:${POSTLY_NOTIFICATIONS_PORT:-8086}}
pid_file="$root/.run/notifications.pid"

if ! curl -fs -o /dev/null --max-time 2 "$service/health/ready"; then
  echo "notifications.sh: the notifications service does not answer at $service/health/ready; start the suite with deploy/up.sh" >&2
  exit 1
fi
if ! curl -fs -o /dev/null --max-time 2 "$gateway/health/live"; then
  echo "notifications.sh: the gateway does not answer at $gateway/health/live; start the suite with deploy/up.sh" >&2
  exit 1
fi
[ -f "$pid_file" ] || { echo "notifications.sh: no $pid_file: is the suite running from this checkout?" >&2; exit 1; }
ulimit -n 8192

exec python3 - "$gateway" "$service" "$pid_file" "$here" <<'PY'
import json, os, queue, socket, sys, threading, time, urllib.parse, uuid
sys.path.insert(0, sys.argv[4])
from suite_client import Gateway, RunningService, percentile, process_sample

gateway, service = Gateway(sys.argv[1]), sys.argv[2]
notifications = RunningService(sys.argv[3])
comments = int(os.environ.get("BENCH_COMMENTS", "200"))
streams = int(os.environ.get("BENCH_STREAMS", "1000"))
idle_seconds = float(os.environ.get("BENCH_IDLE_SECONDS", "30"))
backlog = int(os.environ.get("BENCH_BACKLOG", "10000"))
call, register = gateway.call, gateway.register

# 1. Comment to stream, through the gateway.
author, reader = register("Bench Author"), register("Bench Reader")
post = call("POST", "/api/posts", {"title": f"Bench {uuid.uuid4().hex[:8]}", "content": "Bench post", "status": "published"}, author)
arrivals = queue.Queue()
stream = gateway.connection()
stream.request("GET", "/api/notifications/stream", headers={"Authorization": f"Bearer {author}", "Accept": "text/event-stream"})
response = stream.getresponse()
if response.status != 200:
    sys.exit(f"the stream answered {response.status}")

def read_stream():
    data = None
    while True:
        line = response.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line.startswith("data: "):
            data = line[6:]
        elif line == "" and data is not None:
            arrivals.put((time.monotonic(), json.loads(data)))
            data = None

threading.Thread(target=read_stream, daemon=True).start()
# A first comment, not timed, once the comments service knows the post.
first = call("POST", f"/api/posts/{post['_id']}/comments", {"content": "First"}, reader, patience=10)
latencies = []
for index in range(comments):
    comment = call("POST", f"/api/posts/{post['_id']}/comments", {"content": f"Comment {index}"}, reader)
    acknowledged = time.monotonic()
    while True:
        try:
            arrived, notification = arrivals.get(timeout=10)
        except queue.Empty:
            sys.exit(f"comment {index} did not reach the stream within 10 s")
        if notification.get("commentId") == comment["_id"]:
            latencies.append((arrived - acknowledged) * 1000)
            break
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
import concurrent.futures
unread_before = call("GET", "/api/notifications?limit=1", token=author)["unreadCount"]
notifications.stop()
posts = [call("POST", "/api/posts", {"title": f"Backlog {i} {uuid.uuid4().hex[:6]}", "content": "Bench", "status": "published"}, author)["_id"]
         for i in range(100)]
call("POST", f"/api/posts/{posts[-1]}/comments", {"content": "known?"}, reader, patience=10)
def comment(index):
    call("POST", f"/api/posts/{posts[index % len(posts)]}/comments", {"content": f"Backlog {index}"}, reader, patience=10)
started = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(comment, range(backlog - 1)))
print(f"{backlog} comments written through the gateway in {time.monotonic() - started:.1f} s while notifications was stopped")
notifications.start()
started = time.monotonic()
expected = unread_before + backlog
while True:
    try:
        unread = call("GET", "/api/notifications?limit=1", token=author)["unreadCount"]
    except SystemExit:
        unread = 0  # still starting
    if unread >= expected:
        break
    if time.monotonic() - started > 300:
        sys.exit(f"only {unread - unread_before} of {backlog} notifications after 300 s")
    time.sleep(0.1)
elapsed = time.monotonic() - started
print(f"{backlog} waiting comment events -> notifications in {elapsed:.1f} s from the restart: {backlog / elapsed:.0f} a second")
PY
