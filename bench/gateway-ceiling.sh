#!/usr/bin/env bash
# The most the gateway can relay of one large answer on this machine, whatever the service:
# an nginx origin serves a static file of SIZE bytes (default 914,556, a change feed page of
# 100 posts), and an nginx in front of it relays it as the gateway does, with the proxy buffers
# of deploy/nginx/postly.conf and with nginx's defaults; the origin alone for comparison.
# wrk, CONNECTIONS (64) for DURATION (10 s), ROUNDS (3) each. No suite needed; ports 18080-18081.
#   bench/gateway-ceiling.sh [SIZE]
# Run it under the machine's exclusive lock (flock /work/.machine.lock ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
size=${1:-914556}
rounds=${ROUNDS:-3} duration=${DURATION:-10} connections=${CONNECTIONS:-64}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
scratch=$(mktemp -d /tmp/postly-gateway-ceiling.XXXXXX)
chmod 755 "$scratch"
trap 'nginx -p "$scratch" -c "$scratch/nginx.conf" -s stop 2>/dev/null || true; sleep 0.5; rm -rf "$scratch"' EXIT
mkdir -p "$scratch/www" "$scratch/temp"
head -c "$size" /dev/zero | tr '\0' 'x' >"$scratch/www/page.json"
# The gateway's buffer settings, as its configuration has them.
buffers=$(grep -E '^\s*proxy_(buffers|busy_buffers_size|buffer_size)\s' "$here/../deploy/nginx/postly.conf" | tr -s ' ' | tr '\n' ' ')

cat >"$scratch/nginx.conf" <<EOF
worker_processes 2;
pid $scratch/nginx.pid;
error_log $scratch/error.log warn;
events { worker_connections 1024; }
http {
    sendfile on;
    access_log off;
    client_body_temp_path $scratch/temp;
    proxy_temp_path $scratch/temp;
    fastcgi_temp_path $scratch/temp;
    uwsgi_temp_path $scratch/temp;
    scgi_temp_path $scratch/temp;
    upstream origin { server 127.0.0.1:18081; keepalive 32; }
    server { listen 127.0.0.1:18081; root $scratch/www; }
    server {
        listen 127.0.0.1:18080;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        location /defaults/ { proxy_pass http://origin/; }
        location /gateway/ { $buffers proxy_pass http://origin/; }
    }
}
EOF
nginx -p "$scratch" -c "$scratch/nginx.conf"
sleep 0.5
echo "an answer of $size bytes, $connections connections; the gateway buffers: ${buffers:-none set}"
for url in http://127.0.0.1:18081/page.json http://127.0.0.1:18080/defaults/page.json http://127.0.0.1:18080/gateway/page.json; do
  wrk -t2 -c"$connections" -d2s "$url" >/dev/null
  for ((round = 1; round <= rounds; round++)); do
    wrk -t2 -c"$connections" -d"${duration}s" --latency "$url" \
      | awk -v url="$url" '/Requests\/sec/ {rps = $2} / 99%/ {p99 = $2} END {printf "%-45s %9.0f/s  p99 %s\n", url, rps, p99}'
  done
done
grep -h 'temporary file' "$scratch/error.log" | head -3 || true
