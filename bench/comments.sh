#!/usr/bin/env bash
# Benchmarks the comments service (release build) on a PostgreSQL and a broker of its own:
# GET of a post's 100 comments and POST of a comment at 64 connections. The token keys are
# made here with openssl and served as a static file, so no auth service is needed.
# BENCH_SECONDS (10) and BENCH_CONNECTIONS (64) set the length and the concurrency.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"

run=$(mktemp -d /tmp/postly-comments-bench.XXXXXX)
chmod 755 "$run"
service_pid=
jwks_pid=
cleanup() {
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  [ -n "$jwks_pid" ] && kill "$jwks_pid" 2>/dev/null || true
  broker_stop "$run/broker"
  postgres_stop "$run/postgres"
  rm -rf "$run"
}
trap cleanup EXIT

(cd "$postly_root" && swift build -c release --product postly-comments)
binary="$(cd "$postly_root" && swift build -c release --show-bin-path)/postly-comments"
(cd "$here" && swift build -c release --product comments-bench)
bench="$(cd "$here" && swift build -c release --show-bin-path)/comments-bench"

pg_port=$(free_port)
broker_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"
"$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres postly_comments

# An Ed25519 key, its JWKS as /api/auth/jwks serves it, and one access token signed with it.
python3 -m postly_suite.tokens "$run" 1
token=$(head -1 "$run/tokens.txt")
mkdir -p "$run/jwks/api/auth"
cp "$run/jwks.json" "$run/jwks/api/auth/jwks"
jwks_port=$(free_port)
python3 -m http.server "$jwks_port" --bind 127.0.0.1 --directory "$run/jwks" >"$run/jwks.log" 2>&1 &
jwks_pid=$!

service_port=$(free_port)
PORT=$service_port POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_DATABASE=postly_comments \
  KAFKA_BROKERS=127.0.0.1:$broker_port AUTH_JWKS_URL=http://127.0.0.1:$jwks_port/api/auth/jwks LOG_LEVEL=warning \
  "$binary" >"$run/comments.log" 2>&1 &
service_pid=$!

POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_DATABASE=postly_comments \
  COMMENTS_URL=http://127.0.0.1:$service_port BENCH_TOKEN=$token "$bench" "$@"
