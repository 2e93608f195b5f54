#!/usr/bin/env bash
# Runs every test against a PostgreSQL and a tansu broker of its own, on free ports,
# stopped afterwards even when a test fails. Arguments go to `swift test`
# (for example `--filter PostlyPostgresTests`).
set -euo pipefail
"$(dirname "$0")/install.sh"
source "$(dirname "$0")/lib.sh"

run=$(mktemp -d /tmp/postly-test.XXXXXX)
chmod 755 "$run"
cleanup() {
  broker_stop "$run/broker"
  postgres_stop "$run/postgres"
  rm -rf "$run"
}
trap cleanup EXIT

pg_port=$(free_port)
broker_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"

export POSTLY_TEST_POSTGRES_HOST=127.0.0.1 POSTLY_TEST_POSTGRES_PORT=$pg_port POSTLY_TEST_POSTGRES_USER=postgres
export POSTLY_TEST_KAFKA_BROKERS=127.0.0.1:$broker_port
# For the tests that stop and start a server of their own.
export POSTLY_TEST_PG_BIN=$pg_bin POSTLY_TEST_TANSU=$tansu_bin

cd "$postly_root"
swift build --build-tests
# One test at a time: tests measure latencies (NOTIFY, revocation, timeouts) that mean
# nothing when every suite competes for two cores.
# CI keeps only the end of what a run prints, so a failed run ends with what failed.
swift test --skip-build --no-parallel "$@" 2>&1 | tee "$run/swift-test.log" || {
  echo "== the Swift tests that failed, and why =="
  grep -E '✘|error:' "$run/swift-test.log" | tail -60
  exit 1
}

# Outbound calls while the name server does not answer (a resolver of its own, in a mount
# namespace).
"$postly_root/deploy/check-silent-dns.sh"
# The retries of what reaches the network while installing (deploy/retry.sh).
"$postly_root/deploy/check-retry.sh"
# up.sh's state folder in a checkout under a private folder (/root).
"$postly_root/deploy/check-run-dir.sh"
# The gateway's routing table and problem documents, against fake services.
"$postly_root/deploy/check-gateway.sh"
# docker-compose.yml and the Kubernetes manifests, checked without a Docker engine or a cluster.
"$postly_root/deploy/check_compose.py"
"$postly_root/.deps/k8s-tools/bin/python" "$postly_root/deploy/check_k8s.py"
# The whole suite through the gateway, as the app uses it (its own servers, ports and folder),
# every service twice: the journeys, then one instance of each killed under load.
POSTLY_BUILD_CONFIGURATION=debug POSTLY_SYSTEM_MANIFESTS=ha "$postly_root/deploy/system_test.py"
