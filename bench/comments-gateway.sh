#!/usr/bin/env bash
# A post's 100 comments through the gateway of a running suite (deploy/up.sh, release
# build), as the app reads them: GET /api/posts/{id}/comments at 64 connections.
#   bench/comments-gateway.sh [GATEWAY_URL]     (default http://127.0.0.1:8080)
# Registers a user, creates one post and 100 comments on it (once per run), then runs wrk
# ROUNDS times (3) for DURATION seconds (15) after a WARMUP (5) and prints each round's
# answers per second and latencies. Needs wrk and ../shared/bench-reference beside the repo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gateway=${1:-http://127.0.0.1:8080}
reference=${BENCH_REFERENCE:-$here/../../shared/bench-reference}
rounds=${ROUNDS:-3} duration=${DURATION:-15} warmup=${WARMUP:-5} connections=${CONNECTIONS:-64}

post_id=$(python3 - "$gateway" <<'PY'
import json, sys, urllib.request, uuid
base = sys.argv[1]
def call(method, path, body=None, token=None):
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", **({"Authorization": "Bearer " + token} if token else {})})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)
email = f"bench-{uuid.uuid4().hex[:12]}@example.com"
token = call("POST", "/api/auth/register", {"name": "Comment Bench", "email": email, "password": "correct horse battery"})["accessToken"]
post = call("POST", "/api/posts", {"title": "A post with a hundred comments", "content": "Read the comments below. " * 40, "status": "published"}, token)
for index in range(100):
    call("POST", f"/api/posts/{post['_id']}/comments", {"content": f"Comment number {index}: " + "well said, and more. " * 5}, token)
print(post["_id"])
PY
)
echo "post $post_id with 100 comments" >&2
for round in $(seq "$rounds"); do
  run() { BENCH_COMMON=$reference/load/common.lua BENCH_POST_ID=$post_id wrk -t2 -c"$connections" -d"$1s" --timeout 30s -s "$here/load/comments.lua" "$gateway/"; }
  run "$warmup" >/dev/null
  run "$duration" | awk -v round="$round" '
    /Requests\/sec/ { rps = $2 }
    /Non-2xx/ { errors = $NF }
    /^BENCH_RESULT/ { sub(/^BENCH_RESULT /, ""); summary = $0 }
    END { printf "round %d: %s answers/s, errors %s, %s\n", round, rps, errors ? errors : 0, summary }'
done
