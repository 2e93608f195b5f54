#!/usr/bin/env bash
# Benchmarks the notifications service on the suite that deploy/up.sh runs (start it first):
#   1. latency: a second user comments on the first user's post BENCH_COMMENTS times (200), one
#      at a time, through the gateway; each is timed from the comment's 201 to its event on the
#      first user's open stream (also through the gateway); p50, p99 and max.
#   2. idle streams: BENCH_STREAMS (1000) streams of one user held open on the service's own
#      port (the gateway's 1024 worker connections cannot carry 2 x 1000), and the service's
#      memory (RSS) and CPU over BENCH_IDLE_SECONDS (30) before and while they are open. The
#      suite must allow them: NOTIFICATIONS_STREAMS_PER_USER=1000 deploy/up.sh (default 5).
#   3. a backlog: with the service stopped, BENCH_BACKLOG (10000) comments on 100 of the first
#      user's posts through the gateway; then the service is started again (same binary and
#      environment) and timed until the first user's unread count holds them all: notifications
#      created per second from waiting events.
# BENCH_GATEWAY (http://127.0.0.1:8080) and BENCH_SERVICE (http://127.0.0.1:8086) say where.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
root=$postly_root
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
per_user=$(tr '\0' '\n' <"/proc/$(cat "$pid_file")/environ" | sed -n 's/^NOTIFICATIONS_STREAMS_PER_USER=//p')
if [ "${per_user:-5}" -lt "${BENCH_STREAMS:-1000}" ]; then
  echo "notifications.sh: the service keeps ${per_user:-5} streams per user; start the suite with NOTIFICATIONS_STREAMS_PER_USER=${BENCH_STREAMS:-1000} deploy/up.sh" >&2
  exit 1
fi
ulimit -n 8192

exec python3 "$here/notifications/delivery.py" "$gateway" "$service" "$pid_file"
