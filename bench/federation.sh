#!/usr/bin/env bash
# Benchmarks federation's fan-out on the suite that deploy/up.sh runs, started with
# FEDERATION_ALLOW_PRIVATE_NETWORKS=1 (the peers are on loopback):
#   BENCH_PEERS (50) remote instances (deploy/fediverse/peer.py, PyPI bovine) on loopback ports,
#   each with BENCH_ACTORS_PER_PEER (20) actors sharing its inbox, follow one author through the
#   gateway (1,000 followers on 50 shared inboxes); then the author publishes one post and the
#   time from its 201 to the last peer's acknowledged, verified Create is measured (one delivery
#   per shared inbox), with the cost of signing one delivery from the service's
#   postly_federation_signing_seconds.
# BENCH_GATEWAY (http://127.0.0.1:8080) and BENCH_SERVICE (http://127.0.0.1:8087) say where.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
gateway=${BENCH_GATEWAY:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}
service=${BENCH_SERVICE:-http://127.0.0.1:${POSTLY_FEDERATION_PORT:-8087}}
for url in "$gateway/health/live" "$service/health/ready"; do
  curl -fs -o /dev/null --max-time 2 "$url" || { echo "federation.sh: $url does not answer; start the suite with deploy/up.sh" >&2; exit 1; }
done
ulimit -n 8192
exec python3 "$here/federation/fanout.py" "$gateway" "$service"
