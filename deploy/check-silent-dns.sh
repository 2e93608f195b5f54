#!/usr/bin/env bash
# Outbound calls keep their timeouts while the name server does not answer: in a mount
# namespace of this check alone, the system resolver is pointed at a UDP port that reads and
# never answers, and the Swift tests that need that run there (`POSTLY_TEST_SILENT_DNS`).
# Needs root (port 53, the namespace) and a built test bundle.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d /tmp/postly-silent-dns.XXXXXX)
python3 -c '
import socket, sys
server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
server.bind(("127.0.0.9", 53))
print("listening", flush=True)
while True: server.recvfrom(4096)
' > "$dir/listener.log" 2>&1 &
listener=$!
trap 'kill $listener 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 50); do grep -q listening "$dir/listener.log" && break; sleep 0.1; done
grep -q listening "$dir/listener.log" || { cat "$dir/listener.log"; exit 1; }
printf 'nameserver 127.0.0.9\noptions timeout:3 attempts:2\n' > "$dir/resolv.conf"

cd "$postly_root"
POSTLY_TEST_SILENT_DNS=1 unshare --mount --propagation private sh -c \
  "mount --bind '$dir/resolv.conf' /etc/resolv.conf && exec swift test --skip-build --no-parallel --filter SilentNameServerTests"
