#!/usr/bin/env bash
# Stops what deploy/up.sh started, gracefully: the gateway first (SIGQUIT lets open
# requests finish), then the services (SIGTERM: they drain HTTP and flush Kafka; SIGKILL
# after POSTLY_STOP_TIMEOUT seconds, default 30), then the broker and PostgreSQL.
# Data in .run/postgres stays. --quiet: say nothing when nothing was running.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
run=$(run_dir)
stop_timeout=${POSTLY_STOP_TIMEOUT:-30}
quiet=false
[ "${1:-}" = --quiet ] && quiet=true
say() { $quiet || printf '[down] %s\n' "$*" >&2; }

[ -d "$run" ] || { say "nothing to stop"; exit 0; }

if [ -f "$run/nginx/nginx.master.pid" ]; then
  say "gateway"
  gateway_stop "$run/nginx"
fi

# All services at once, then wait: their drains overlap instead of adding up.
stopping=()
for pid_file in "$run"/*.pid; do
  [ -f "$pid_file" ] || continue
  name=$(basename "$pid_file" .pid) pid=$(cat "$pid_file")
  # posts-2 is an instance of postly-posts.
  if is_running "$pid" "postly-${name%%-*}"; then
    say "postly-$name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    stopping+=("$pid:$name")
  fi
  rm -f "$pid_file"
done
for entry in "${stopping[@]}"; do
  pid=${entry%%:*}
  if ! wait_exit "$pid" "$stop_timeout"; then
    say "postly-${entry#*:} did not stop within ${stop_timeout}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
done

if [ -f "$run/broker/broker.pid" ]; then
  pid=$(cat "$run/broker/broker.pid")
  if is_running "$pid" tansu; then
    say "broker (pid $pid)"
    broker_stop "$run/broker"
    wait_exit "$pid" 10 || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$run/broker/broker.pid"
fi

if [ -f "$run/postgres/data/postmaster.pid" ]; then
  say "PostgreSQL"
  postgres_stop "$run/postgres"
fi
