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
openssl genpkey -algorithm ed25519 -out "$run/key.pem" 2>/dev/null
mkdir -p "$run/jwks/api/auth"
token=$(python3 - "$run" <<'PY'
import base64, json, subprocess, sys, time, uuid
run = sys.argv[1]
b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
public = subprocess.run(["openssl", "pkey", "-in", f"{run}/key.pem", "-pubout", "-outform", "DER"], capture_output=True, check=True).stdout[-32:]
with open(f"{run}/jwks/api/auth/jwks", "w") as f:
    json.dump({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "bench", "x": b64(public)}]}, f)
now = int(time.time())
header = b64(json.dumps({"alg": "EdDSA", "kid": "bench", "typ": "JWT"}).encode())
claims = b64(json.dumps({"sub": str(uuid.uuid4()), "sid": str(uuid.uuid4()), "iat": now - 60, "exp": now + 3600,
                         "iss": "postly-auth", "name": "Bench User"}).encode())
with open(f"{run}/signed", "wb") as f:
    f.write(f"{header}.{claims}".encode())
signature = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", f"{run}/key.pem", "-rawin", "-in", f"{run}/signed"],
                           capture_output=True, check=True).stdout
print(f"{header}.{claims}.{b64(signature)}")
PY
)
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
