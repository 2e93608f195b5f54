#!/usr/bin/env bash
# Checks the gateway configuration (deploy/nginx/postly.conf) for real: runs nginx with it
# on a free port in front of fake services (deploy/postly_suite/fake_services.py: each answers
# who it is, the path it got and the X-Request-ID it got), with the images service left out, and
# asserts the routing table and the problem documents with curl. Starts and stops all it
# needs; needs nginx, curl and python3. Prints "N passed, M failed" last; exits 1 on failure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

run=$(mktemp -d /tmp/postly-gateway-check.XXXXXX)
chmod 755 "$run" # nginx's workers (nobody) write request bodies under it
fake_pid=""
cleanup() {
  gateway_stop "$run/nginx"
  gateway_stop "$run/compose"
  if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
  rm -rf "$run"
}
trap cleanup EXIT

# Every service on a free port; all but images get a fake. Posts and comments run twice, so
# that a write can go to the other instance when the first drops it.
gateway_port=$(free_port)
fakes=()
for name in "${postly_all_services[@]}"; do
  port=$(free_port)
  export "POSTLY_${name^^}_PORT=$port"
  [ "$name" = images ] || fakes+=("$name=$port")
done
for name in posts comments; do
  port=$(free_port)
  export "POSTLY_${name^^}_INSTANCES=2" "POSTLY_${name^^}_PORT_2=$port"
  fakes+=("$name=$port")
done

python3 -m postly_suite.fake_services "${fakes[@]}" &
fake_pid=$!
for spec in "${fakes[@]}"; do wait_port "${spec#*=}" 10 || { echo "fake ${spec%=*} did not start" >&2; exit 1; }; done

# Low per-address limits, so that reaching them takes a few requests: 2 sign-ins a minute
# with a burst of 3, one open stream.
POSTLY_CORS_ORIGINS="http://localhost:3000, https://app.example.com" POSTLY_GATEWAY_SIGNIN_PER_MINUTE=2 POSTLY_GATEWAY_SIGNIN_BURST=3 \
  POSTLY_GATEWAY_STREAMS_PER_ADDRESS=1 gateway_config "$run/nginx" "$gateway_port"
# The same postly.conf with short timeouts, so that a slow service and a slow client take
# seconds to check, and one route that fails inside nginx itself.
sed -e 's/proxy_read_timeout 60s;/proxy_read_timeout 2s;/' -e 's/client_body_timeout 30s;/client_body_timeout 1s;/' \
  "$postly_root/deploy/nginx/postly.conf" >"$run/postly.conf"
grep -q 'proxy_read_timeout 2s;' "$run/postly.conf" && grep -q 'client_body_timeout 1s;' "$run/postly.conf" \
  || { echo "postly.conf's timeouts are not where check-gateway.sh shortens them" >&2; exit 1; }
sed -i "s#include $postly_root/deploy/nginx/postly.conf;#include $run/postly.conf;#" "$run/nginx/nginx.conf"
echo 'location = /check/internal-error { set $postly_service gateway; return 500; }' >>"$run/nginx/postly-upstreams.conf"
gateway_nginx "$run/nginx" -t -q
gateway_start "$run/nginx" "$gateway_port" "$run/gateway.log"
base="http://127.0.0.1:$gateway_port"
python=$(command -v /usr/bin/python3 || command -v python3)

passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# request METHOD PATH [curl args...]: status in $status, headers in $run/h, body in $run/b,
# the body's top-level JSON fields in the array body (one python3 per request: it is slow
# to start).
declare -A body
request() {
  local method=$1 path=$2; shift 2
  : >"$run/b"; : >"$run/h"  # curl leaves them as they were when nothing arrives
  status=$(curl -s -o "$run/b" -D "$run/h" -w '%{http_code}' -X "$method" "$@" "$base$path") || status=000
  read_body
}
# read_body: the top-level JSON fields of $run/b into the array body.
read_body() {
  local key value
  body=()
  while IFS=$'\t' read -r key value; do body[$key]=$value; done < <("$python" -c '
import json, sys
try:
    for k, v in json.load(open(sys.argv[1])).items():
        print(k, "" if v is None else v, sep="\t")
except Exception:
    pass' "$run/b")
}
header() { { grep -i "^$1:" "$run/h" || true; } | head -1 | cut -d: -f2- | tr -d '\r' | sed 's/^ //'; }
header_count() { grep -ci "^$1:" "$run/h" || true; }
json() { echo "${body[$1]:-}"; }

# expect_route METHOD PATH SERVICE: the request reaches SERVICE with its path and query unchanged.
expect_route() {
  local method=$1 path=$2 service=$3
  request "$method" "$path" -H 'Content-Type: application/json'
  if [ "$status" = 200 ] && [ "$(json service)" = "$service" ] && [ "$(json path)" = "$path" ]; then pass
  else fail "$method $path: wanted $service, got $status $(head -c 300 "$run/b")"; fi
}

# expect_problem STATUS CODE: the last answer is a problem document with STATUS and CODE whose
# requestId is the response's X-Request-ID.
expect_problem() {
  local want=$1 code=$2 what=$3 id
  id=$(header X-Request-ID)
  if [ "$status" = "$want" ] && [[ "$(header Content-Type)" == application/problem+json* ]] \
    && [ "$(json status)" = "$want" ] && [ "$(json code)" = "$code" ] && [ "$(json type)" = about:blank ] \
    && [ -n "$(json title)" ] && [ -n "$(json detail)" ] && [ "$(json error)" = "$(json detail)" ] \
    && [ -n "$id" ] && [ "$(json requestId)" = "$id" ] && [ "$(header_count X-Request-ID)" = 1 ]; then pass
  else fail "$what: wanted a $want $code problem document, got $status $(header Content-Type) $(head -c 300 "$run/b")"; fi
}

# --- the routing table (api-contract.md) ---
expect_route POST /api/auth/register auth
expect_route POST /api/auth/login/email auth
expect_route GET /api/auth/jwks auth
expect_route GET /api/auth/check auth
expect_route GET /api/posts posts
expect_route GET '/api/posts?page=2&limit=5&status=draft' posts
expect_route POST /api/posts posts
expect_route GET /api/posts/abc posts
expect_route PUT /api/posts/abc posts
expect_route DELETE /api/posts/abc posts
expect_route GET /api/posts/slug/creme-brulee posts
expect_route GET /api/posts/slug/comments posts   # the post titled "Comments", not comments of a post
expect_route POST /api/posts/abc/like posts
expect_route DELETE /api/posts/abc/like posts
expect_route GET /api/users/me/posts posts
expect_route GET '/api/users/u-1/posts?status=draft' posts
expect_route GET '/api/changes?since=now&limit=100&wait=0' posts
expect_route GET /api/feeds/posts.rss posts
expect_route GET '/api/feeds/posts.atom?nocache=1' posts
expect_route GET /api/users/u-1/feed.atom posts
expect_route GET '/api/posts/search?q=swift' search
expect_route GET '/api/posts/search?q=c+&+d=e' search   # unescaped & = + arrive as sent
expect_route GET '/api/posts/search/?q=swift' search   # trailing slashes, as everywhere
expect_route GET '/api/changes/?since=now' posts
expect_route GET /api/posts/ posts
expect_route GET /api/posts/abc/comments comments
expect_route GET '/api/posts/0123456789abcdef01234567/comments?page=1&limit=10' comments
expect_route POST /api/posts/abc/comments comments
expect_route DELETE /api/posts/abc/comments/c-1 comments
expect_route GET /api/notifications notifications
expect_route GET '/api/notifications?unread=true' notifications
expect_route POST /api/notifications/read notifications
expect_route GET '/.well-known/webfinger?resource=acct:ada@127.0.0.1' federation
expect_route GET /.well-known/nodeinfo federation
expect_route GET /nodeinfo/2.1 federation
expect_route GET /ap/users/u-1 federation
expect_route GET '/ap/users/u-1/outbox?page=2' federation
expect_route POST /ap/inbox federation
expect_route POST /ap/users/u-1/inbox federation

# The federation locations forward the Host the client sent, port included: peers sign it.
request GET /ap/users/u-1
if [ "$(json host)" = "127.0.0.1:$gateway_port" ]; then pass
else fail "the federation locations forward the client's Host with its port: got '$(json host)'"; fi
request GET /ap/users/u-1 -H 'Host: social.example:8443'
if [ "$(json host)" = social.example:8443 ]; then pass; else fail "another Host passes as sent: got '$(json host)'"; fi

# Server-sent events pass through unbuffered: the first event arrives while the service
# still holds the stream open.
started=$(date +%s%N)
: >"$run/b"
curl -s -N --max-time 2 -D "$run/h" -o "$run/b" "$base/api/notifications/stream" || true
if grep -q 'data: {"n":1}' "$run/b" && ! grep -q '"n":2' "$run/b" \
  && [[ "$(header Content-Type)" == text/event-stream* ]] && [ -n "$(header X-Request-ID)" ]; then pass
else fail "stream: wanted the first event within 2 s, got $(cat "$run/b") after $((($(date +%s%N) - started) / 1000000)) ms"; fi

# --- X-Request-ID ---
request GET /api/posts -H 'X-Request-ID: client-id-42'
if [ "$(header X-Request-ID)" = client-id-42 ] && [ "$(json requestId)" = client-id-42 ] && [ "$(header_count X-Request-ID)" = 1 ]; then pass
else fail "a client's X-Request-ID is passed upstream and echoed once: $(header X-Request-ID) / $(json requestId)"; fi
request GET /api/posts
generated=$(header X-Request-ID)
if [[ "$generated" =~ ^[0-9a-f]{32}$ ]] && [ "$(json requestId)" = "$generated" ]; then pass
else fail "without X-Request-ID the gateway makes one and sends it upstream: '$generated' / $(json requestId)"; fi
request GET /api/posts -H 'X-Request-ID: a"b<script>'
if [[ "$(header X-Request-ID)" =~ ^[0-9a-f]{32}$ ]]; then pass
else fail "an X-Request-ID that is not a plain token is replaced: $(header X-Request-ID)"; fi

# --- a service's own answers pass through unchanged ---
request GET /api/posts/fail-503
if [ "$status" = 503 ] && [ "$(json service)" = posts ]; then pass
else fail "a service's own 503 passes through: $status $(head -c 200 "$run/b")"; fi

# --- problem documents of the gateway ---
request GET '/api/images/search?query=sea' -H 'X-Request-ID: images-down-1'
expect_problem 503 service_unavailable "a service that is not running"
if [ "$(header Retry-After)" != "" ] && [ "$(header X-Request-ID)" = images-down-1 ] && grep -q images "$run/b"; then pass
else fail "503 carries Retry-After, the client's request id and names the service"; fi

head -c $((2 * 1024 * 1024)) /dev/zero >"$run/2mib"
request POST /api/posts -H 'Content-Type: application/json' --data-binary "@$run/2mib"
expect_problem 413 payload_too_large "a 2 MiB body"
head -c $((1024 * 1024 - 1024)) /dev/zero >"$run/almost-1mib"
request POST /api/posts -H 'Content-Type: application/json' --data-binary "@$run/almost-1mib"
if [ "$status" = 200 ] && [ "$(json bodyBytes)" = $((1024 * 1024 - 1024)) ]; then pass
else fail "a body just under 1 MiB reaches the service: $status $(head -c 200 "$run/b")"; fi

for path in /api/unknown /api/postsx /api/users /api/auth /api/images /api/feeds /api /health/ready /metrics /openapi.json / /internal/x /.well-known/other /ap; do
  request GET "$path"
  expect_problem 404 not_found "GET $path"
done

# The import routes live on the services' own ports only (POSTLY_IMPORT_TOKEN): never through here,
# however the path is spelled.
for path in /internal/import/users /internal/import/posts /internal/import/likes /internal/import/comments \
  /api/posts/../../internal/import/posts /api/auth/%2e%2e/%2e%2e/internal/import/users //internal/import/comments; do
  request POST "$path" --path-as-is -H 'Authorization: Bearer any' -H 'Content-Type: application/json' --data '{"users":[]}'
  expect_problem 404 not_found "POST $path"
done

# CORS: preflights answered by the gateway, allowed origins echoed on every answer.
app=https://app.example.com
request OPTIONS /api/posts -H "Origin: $app" -H 'Access-Control-Request-Method: POST' \
  -H 'Access-Control-Request-Headers: authorization, content-type, idempotency-key'
if [ "$status" = 204 ] && [ "$(header Access-Control-Allow-Origin)" = "$app" ] && [ ! -s "$run/b" ] \
  && [[ "$(header Access-Control-Allow-Methods)" == *PUT* ]] && [[ "$(header Access-Control-Allow-Headers)" == *Idempotency-Key* ]] \
  && [[ "$(header Access-Control-Allow-Headers)" == *Last-Event-ID* ]] && [ -n "$(header Access-Control-Max-Age)" ] \
  && [ -n "$(header X-Request-ID)" ]; then pass
else fail "a preflight from an allowed origin: $status $(cat "$run/h")"; fi
request OPTIONS /api/notifications/stream -H 'Origin: https://evil.example' -H 'Access-Control-Request-Method: GET'
if [ "$status" = 204 ] && [ -z "$(header Access-Control-Allow-Origin)" ] && [ -z "$(header Access-Control-Allow-Methods)" ]; then pass
else fail "a preflight from another origin is answered without allowing anything: $status $(cat "$run/h")"; fi
request GET /api/posts -H "Origin: $app"
if [ "$status" = 200 ] && [ "$(json service)" = posts ] && [ "$(header Access-Control-Allow-Origin)" = "$app" ] \
  && [[ "$(header Access-Control-Expose-Headers)" == *X-Total-Count* ]] && [[ "$(header Access-Control-Expose-Headers)" == *ETag* ]]; then pass
else fail "an answer to an allowed origin carries Access-Control-Allow-Origin and the exposed headers: $(cat "$run/h")"; fi
request GET /api/posts -H 'Origin: http://localhost:3000'
if [ "$(header Access-Control-Allow-Origin)" = http://localhost:3000 ]; then pass; else fail "the second configured origin is allowed"; fi
request GET /api/posts -H 'Origin: https://evil.example'
if [ "$status" = 200 ] && [ -z "$(header Access-Control-Allow-Origin)" ]; then pass; else fail "another origin gets no Access-Control-Allow-Origin"; fi
request GET /api/posts
if [ -z "$(header Access-Control-Allow-Origin)" ]; then pass; else fail "a request without Origin gets no CORS headers"; fi
request GET '/.well-known/webfinger?resource=acct:ada@127.0.0.1' -H "Origin: $app"
if [ "$status" = 200 ] && [ "$(header_count Access-Control-Allow-Origin)" = 1 ] && [ "$(header Access-Control-Allow-Origin)" = '*' ]; then pass
else fail "a service's own Access-Control-Allow-Origin is the only one sent: $(cat "$run/h")"; fi
request GET /api/images/search -H "Origin: $app"
if [ "$status" = 503 ] && [ "$(header Access-Control-Allow-Origin)" = "$app" ] && [ "$(header_count X-Request-ID)" = 1 ]; then pass
else fail "the gateway's own problem documents carry CORS headers too: $status $(cat "$run/h")"; fi

# nginx's own errors, each a problem document with the request id.
request GET /api/posts/close-connection -H 'X-Request-ID: dropped-1'
expect_problem 503 service_unavailable "a service that drops the connection (nginx's 502)"
request GET /api/posts/slow-answer
expect_problem 503 service_unavailable "a service that does not answer in time (nginx's 504)"
# A write that an instance drops before answering (each request below names the first
# instance's port, and that fake drops it): with an Idempotency-Key the other instance answers
# it, body and URI as sent; without one it is never sent twice, so some answer 503.
for route in "posts /api/posts" "comments /api/posts/p1/comments?x=1"; do
  service=${route% *} path=${route#* }
  dropping=$(service_port "$service")
  for attempt in 1 2 3 4; do
    request POST "$path" -H "X-Check-Close-Port: $dropping" -H "Idempotency-Key: retry-$attempt" --data-binary '{"title":"t"}'
    if [ "$status" = 200 ] && [ "$(json service)" = "$service" ] && [ "$(json path)" = "$path" ] && [ "$(json bodyBytes)" = 13 ]; then pass
    else fail "POST $path with an Idempotency-Key, dropped by one $service instance: wanted the other's answer, got $status $(head -c 300 "$run/b")"; fi
  done
  unanswered=0
  for attempt in 1 2 3 4; do
    request POST "$path" -H "X-Check-Close-Port: $dropping" --data-binary '{"title":"t"}'
    [ "$status" != 503 ] || unanswered=$((unanswered + 1))
  done
  if [ "$unanswered" -gt 0 ]; then pass; else fail "POST $path without an Idempotency-Key is never sent to a second $service instance"; fi
done
request GET /.idempotent/posts
expect_problem 404 not_found "the retrying locations are internal"
long=$(head -c 9000 /dev/zero | tr '\0' a)
request GET "/api/posts/$long"
expect_problem 414 uri_too_long "a 9 KiB URI"
request GET /api/posts -H "X-Long: $long"
expect_problem 431 headers_too_large "a 9 KiB header (nginx's 494)"
request GET /api/posts -H 'Host: bad/host'
expect_problem 400 bad_request "an invalid Host header"
# A body that stops arriving: nginx logs 408 and closes the connection without a page.
request POST /api/posts -H 'Content-Type: application/json' -H 'Content-Length: 100' --data-binary '{"title"' --max-time 10
if [ "$status" = 000 ] && [ ! -s "$run/b" ]; then pass
else fail "a body that stops arriving: wanted the connection closed without a page, got $status $(head -c 200 "$run/b")"; fi
request GET /check/internal-error -H 'X-Request-ID: broken-1'
expect_problem 500 internal_error "a failure inside the gateway"

# Request lines nginx cannot parse (curl would clean them up: sent as raw bytes). Each is a 400
# problem document, not nginx's HTML 500.
for line in 'GET /api/posts/%zz HTTP/1.1' 'GET /api/posts/%00 HTTP/1.1' 'GET /api/posts/% HTTP/1.1' \
  'GET /api/posts/%2 HTTP/1.1' $'GET /api/posts/\x01 HTTP/1.1' $'GET /api/\x7f HTTP/1.1'; do
  "$python" - "$gateway_port" "$line" >"$run/raw" <<'PY'
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as s:
    s.sendall(sys.argv[2].encode("latin-1") + b"\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b" ")[1].decode() if head else "000")
print(head.decode("latin-1"))
print("\n" + body.decode("latin-1"))
PY
  status=$(head -1 "$run/raw")
  sed -n '2,/^$/p' "$run/raw" >"$run/h"
  sed '1,/^$/d' "$run/raw" >"$run/b"
  read_body
  expect_problem 400 bad_request "the request line $(printf %q "$line")"
done

# Per-address limits: sign-ins past the rate and burst answer 429 with Retry-After; other auth
# routes and other services are not limited; a second open stream is refused (with a trailing
# slash too), and so is a stream or another change-feed request while a change-feed request
# waits (held requests count together), however its `wait` is written.
limited=""
for attempt in 1 2 3 4 5 6; do
  request POST /api/auth/register -H 'Content-Type: application/json' -d '{}'
  if [ "$status" = 429 ]; then limited=$attempt; break; fi
done
expect_problem 429 rate_limited "registrations past the limit (after $limited requests)"
if [ "$(header Retry-After)" = 30 ]; then pass; else fail "429 carries Retry-After: 30 at 2 a minute, got '$(header Retry-After)'"; fi
for path in /api/auth/login /api/auth/login/email /api/auth/register/; do
  request POST "$path" -H 'Content-Type: application/json' -d '{}'
  expect_problem 429 rate_limited "POST $path shares the sign-in limit"
done
expect_route GET /api/auth/jwks auth
expect_route POST /api/auth/refresh auth
expect_route POST /api/posts posts
curl -s -N --max-time 3 -o /dev/null "$base/api/notifications/stream" &
first_stream=$!
sleep 0.5
request GET /api/notifications/stream --max-time 3
expect_problem 429 rate_limited "a second stream from one address, past POSTLY_GATEWAY_STREAMS_PER_ADDRESS=1"
request GET '/api/notifications/stream/?ticket=check-gateway-ticket' --max-time 3
expect_problem 429 rate_limited "a second stream, its path with a trailing slash"
# The refusal is not logged with its request line: the ticket in it would still open a stream.
if grep -q check-gateway-ticket "$run/gateway.log"; then fail "a refused stream's ticket is in the gateway's log: $(grep check-gateway-ticket "$run/gateway.log")"; else pass; fi
wait "$first_stream" || true
curl -s --max-time 5 -o /dev/null "$base/api/changes?since=now&wait=30" &
long_poll=$!
sleep 0.5
request GET /api/notifications/stream --max-time 3
expect_problem 429 rate_limited "a stream while a change-feed request waits, past POSTLY_GATEWAY_STREAMS_PER_ADDRESS=1"
request GET '/api/changes?since=now&wait=5'
expect_problem 429 rate_limited "a second waiting change-feed request, past POSTLY_GATEWAY_STREAMS_PER_ADDRESS=1"
request GET '/api/changes?since=now&Wait=0&wait=5'
expect_problem 429 rate_limited "a second change-feed request whose first 'wait' of any case says 0"
wait "$long_poll" || true
expect_route GET '/api/changes?since=now&wait=0' posts
expect_route GET '/api/changes?limit=10' posts

request GET /health/live
if [ "$status" = 200 ] && [ -n "$(header X-Request-ID)" ]; then pass; else fail "gateway /health/live: $status"; fi

gateway_stop "$run/nginx"

# --- the docker-compose flavour: the same postly.conf inside a frame like the nginx image's
# (/etc/nginx/nginx.conf including conf.d/*.conf), with the compose upstream file. Docker's
# DNS is not here, so every service is "missing": it must answer 503, not fail to start.
compose="$run/compose"
mkdir -p "$compose/conf.d" "$compose/temp"
cp "$postly_root/deploy/nginx/postly.conf" "$compose/conf.d/default.conf"
compose_port=$(free_port)
sed "s/^listen 8080;/listen 127.0.0.1:$compose_port;/" "$postly_root/deploy/nginx/postly-upstreams.compose.conf" \
  >"$compose/postly-upstreams.conf"
cp "$postly_root/deploy/nginx/postly-headers.conf" "$compose/"
POSTLY_CORS_ORIGINS='*' "$postly_root/deploy/nginx/cors-origins.sh" "$compose/postly-cors-origins.conf"
"$postly_root/deploy/nginx/limits.sh" "$compose"
cat >"$compose/nginx.conf" <<CONF
pid $compose/nginx.pid;
error_log stderr notice;
events { worker_connections 64; }
http {
    client_body_temp_path $compose/temp/client_body;
    proxy_temp_path $compose/temp/proxy;
    fastcgi_temp_path $compose/temp/fastcgi;
    uwsgi_temp_path $compose/temp/uwsgi;
    scgi_temp_path $compose/temp/scgi;
    include conf.d/*.conf;
}
CONF
if gateway_nginx "$compose" -t -q 2>>"$run/gateway.log"; then pass; else fail "the compose flavour passes nginx -t"; fi
gateway_start "$compose" "$compose_port" "$run/gateway.log"
base="http://127.0.0.1:$compose_port"
request GET /api/posts -H 'X-Request-ID: compose-1'
expect_problem 503 service_unavailable "compose flavour, a service without a container"
request GET /api/nope -H 'Origin: https://anywhere.example'
expect_problem 404 not_found "compose flavour, an unknown path"
if [ "$(header Access-Control-Allow-Origin)" = https://anywhere.example ]; then pass
else fail "compose flavour with POSTLY_CORS_ORIGINS=*: any origin is allowed"; fi
gateway_stop "$compose"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
