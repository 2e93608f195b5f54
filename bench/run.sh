#!/usr/bin/env bash
# Runs the benchmarks in release mode on a PostgreSQL and a tansu broker of their own:
#   bench/run.sh [postgres-bench|outbox-bench ...]   (default: all of them)
# BENCH_SECONDS sets each postgres-bench measurement's length, BENCH_EVENTS the outbox burst.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../deploy/install.sh"
source "$here/../deploy/lib.sh"

run=$(mktemp -d /tmp/postly-bench.XXXXXX)
chmod 755 "$run"
trap 'broker_stop "$run/broker"; postgres_stop "$run/postgres"; rm -rf "$run"' EXIT
pg_port=$(free_port)
broker_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"

benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(postgres-bench outbox-bench)
cd "$here"
for bench in "${benches[@]}"; do swift build -c release --product "$bench"; done
bin=$(swift build -c release --show-bin-path)
for bench in "${benches[@]}"; do
  echo "== $bench"
  # A fetch wait of 100 ms, as deploy/up.sh gives the services: tansu holds every fetch that
  # long, so it bounds how soon the consumer sees an event.
  POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_DATABASE=postgres \
    KAFKA_BROKERS=127.0.0.1:$broker_port KAFKA_FETCH_WAIT_MAX_MS=100 "$bin/$bench"
done
