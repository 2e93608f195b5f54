#!/usr/bin/env bash
# A post's 100 comments through the gateway of a running suite (deploy/up.sh, release
# build), as the app reads them: GET /api/posts/{id}/comments at 64 connections.
#   bench/comments-gateway.sh [GATEWAY_URL]     (default http://127.0.0.1:8080)
# Registers a user, creates one post and 100 comments on it (once per run), then runs wrk
# ROUNDS times (3) for DURATION seconds (15) after a WARMUP (5) and prints each round's
# answers per second and latencies. Needs wrk and ../shared/bench-reference beside the repo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
gateway=${1:-http://127.0.0.1:8080}
reference=${BENCH_REFERENCE:-$here/../../shared/bench-reference}
rounds=${ROUNDS:-3} duration=${DURATION:-15} warmup=${WARMUP:-5} connections=${CONNECTIONS:-64}

post_id=$(python3 "$here/comments/post_with_comments.py" "$gateway")
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
