#!/usr/bin/env bash
# Walks the mobile app's main path through the gateway of a running suite (deploy/up.sh):
# register two users, write a post, read it by id and slug, like it, comment on it, see
# the comment in the post, log out and see the token refused. Ends with `N passed, M failed`.
#   deploy/smoke.sh [BASE_URL]     (default http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080})
set -uo pipefail
base=${1:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}
passed=0 failed=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}
# call METHOD PATH [TOKEN] [BODY]: sets status and body.
call() {
  local args=(-s -o /tmp/postly-smoke.body -w '%{http_code}' -X "$1" "$base$2" -H 'Content-Type: application/json')
  [ -n "${3:-}" ] && args+=(-H "Authorization: Bearer $3")
  [ -n "${4:-}" ] && args+=(--data "$4")
  status=$(curl "${args[@]}")
  body=$(cat /tmp/postly-smoke.body)
}
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); exec("for k in sys.argv[2].split(\".\"): d = d[int(k)] if isinstance(d, list) else d[k]"); print(d)' "$body" "$1"; }
eventually() { # eventually SECONDS COMMAND...: until COMMAND succeeds
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.1; done
}

suffix=$RANDOM$RANDOM
call POST /api/auth/register "" "{\"name\":\"Ada\",\"email\":\"Ada.$suffix@Example.com \",\"password\":\"correct horse\"}"
check "register answers 201" [ "$status" = 201 ]
ada=$(field accessToken 2>/dev/null)
call POST /api/auth/register "" "{\"name\":\"Grace\",\"email\":\"grace.$suffix@example.com\",\"password\":\"correct horse\"}"
grace=$(field accessToken 2>/dev/null)
call POST /api/auth/login/email "" "{\"email\":\"ada.$suffix@example.com\",\"password\":\"correct horse\"}"
check "login with the email in another case" [ "$status" = 200 ]

call POST /api/posts "$ada" '{"title":"Crème brûlée","content":"Custard, sugar, a torch.","status":"published"}'
check "create post answers 201" [ "$status" = 201 ]
post=$(field _id 2>/dev/null)
slug=$(field slug 2>/dev/null)
check "slug folds diacritics" [ "${slug%%-[0-9]*}" = creme-brulee ]
call GET "/api/posts/$post"
check "post readable by id" [ "$status" = 200 ]
check "timestamps carry milliseconds" python3 -c 'import re,sys; sys.exit(0 if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", sys.argv[1]) else 1)' "$(field createdAt)"
call GET "/api/posts/slug/$slug"
check "post readable by slug" [ "$status" = 200 ]

call POST "/api/posts/$post/like" "$grace"
check "like answers 200 with a message" [ "$status" = 200 ]
call GET "/api/posts/$post/like" "$grace"
check "liked is true" [ "$(field liked)" = True ]

call POST "/api/posts/$post/comments" "$grace" '{"content":"Torch on low, and patience."}'
check "comment answers 201" [ "$status" = 201 ]
comments_in_post() { call GET "/api/posts/$post"; [ "$(field commentsCount 2>/dev/null)" = 1 ]; }
check "the comment shows in the post within 1 s" eventually 1 comments_in_post
call GET "/api/posts/$post/comments"
check "comments list has it" [ "$(field 0.content 2>/dev/null)" = "Torch on low, and patience." ]

call POST /api/posts "$ada" '{"title":"Secret","content":"draft","status":"draft"}'
draft=$(field _id 2>/dev/null)
call GET "/api/posts/$draft" "$grace"
check "someone else's draft is 404" [ "$status" = 404 ]

call POST /api/auth/logout "$grace"
check "logout answers 200" [ "$status" = 200 ]
refused() { call GET "/api/posts/$post/like" "$grace"; [ "$status" = 401 ]; }
check "the logged-out token is refused by the posts service within 1 s" eventually 1 refused

call GET /api/nothing
check "unknown route is a 404 problem document" [ "$status" = 404 ]

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
