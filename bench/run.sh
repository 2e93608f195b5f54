#!/usr/bin/env bash
# Benchmarks the libpq layer against postgres-nio on a PostgreSQL of its own, in release mode.
# Arguments go to postgres-bench (none today); BENCH_SECONDS sets each measurement's length.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"

run=$(mktemp -d /tmp/postly-bench.XXXXXX)
chmod 755 "$run"
trap 'postgres_stop "$run/postgres"; rm -rf "$run"' EXIT
port=$(free_port)
postgres_start "$run/postgres" "$port"

cd "$here"
swift build -c release --product postgres-bench
POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$port POSTGRES_USER=postgres POSTGRES_DATABASE=postgres \
  "$(swift build -c release --show-bin-path)/postgres-bench" "$@"
