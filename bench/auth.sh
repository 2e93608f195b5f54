#!/usr/bin/env bash
# Benchmarks the auth service's release binary with wrk, on a PostgreSQL and a broker of its
# own: GET /api/auth/check (token verification plus the session and user reads) and
# POST /api/auth/login/email at bcrypt's default cost (12). Prints wrk's requests/s and
# latency distribution (p50, p99). BENCH_SECONDS sets each measurement's length (15),
# BENCH_CHECK_CONNECTIONS and BENCH_LOGIN_CONNECTIONS the concurrency (16, 4).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
seconds=${BENCH_SECONDS:-15}

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

run=$(mktemp -d /tmp/postly-auth-bench.XXXXXX)
chmod 755 "$run"
auth_pid=
cleanup() {
  [ -n "$auth_pid" ] && kill "$auth_pid" 2>/dev/null && wait "$auth_pid" 2>/dev/null
  broker_stop "$run/broker"
  postgres_stop "$run/postgres"
  rm -rf "$run"
}
trap cleanup EXIT

pg_port=$(free_port)
broker_port=$(free_port)
auth_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"

cd "$here/.."
swift build -c release --product postly-auth
PORT=$auth_port POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_DATABASE=postgres \
  KAFKA_BROKERS=127.0.0.1:$broker_port BCRYPT_COST=${BCRYPT_COST:-12} LOG_LEVEL=warning \
  "$(swift build -c release --show-bin-path)/postly-auth" >"$run/auth.log" 2>&1 &
auth_pid=$!
wait_port "$auth_port" 60 || { cat "$run/auth.log"; exit 1; }
base=http://127.0.0.1:$auth_port/api/auth

body='{"name": "Bench User", "email": "bench@example.com", "password": "a bench password"}'
token=$(curl -sf -H 'Content-Type: application/json' -d "$body" "$base/register" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["accessToken"])')

echo "== GET /api/auth/check, ${BENCH_CHECK_CONNECTIONS:-16} connections, ${seconds}s"
wrk -t2 -c"${BENCH_CHECK_CONNECTIONS:-16}" -d"${seconds}s" --latency -H "Authorization: Bearer $token" "$base/check"

cat >"$run/login.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"email": "bench@example.com", "password": "a bench password"}'
LUA
echo "== POST /api/auth/login/email at bcrypt cost ${BCRYPT_COST:-12}, ${BENCH_LOGIN_CONNECTIONS:-4} connections, ${seconds}s"
wrk -t2 -c"${BENCH_LOGIN_CONNECTIONS:-4}" -d"${seconds}s" --timeout 10s --latency -s "$run/login.lua" "$base/login/email"
