#!/usr/bin/env bash
# Runs the suites that take brokers away and bring them back empty, again and again, each
# run in a process of its own, and says how many ran clean (a crash or a failure ends none
# of the later runs):
#   bench/kafka-failures.sh [RUNS]   (default 200; about 45 s a run on 2 cores)
# The test binary is copied first, so building while it runs changes nothing. Each run's
# output is kept in $POSTLY_LOOP_DIR (default a temporary folder) when it did not pass.
set -euo pipefail
runs=${1:-200}
here=$(cd "$(dirname "$0")" && pwd)
"$here/../deploy/install.sh"
source "$here/../deploy/lib.sh"

run=$(mktemp -d /tmp/postly-kafka-loop.XXXXXX)
chmod 755 "$run"
trap 'broker_stop "$run/broker"; postgres_stop "$run/postgres"; rm -rf "$run"' EXIT
logs=${POSTLY_LOOP_DIR:-$(mktemp -d /tmp/postly-kafka-loop-logs.XXXXXX)}
mkdir -p "$logs"
pg_port=$(free_port)
broker_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"
export POSTLY_TEST_POSTGRES_HOST=127.0.0.1 POSTLY_TEST_POSTGRES_PORT=$pg_port POSTLY_TEST_POSTGRES_USER=postgres
export POSTLY_TEST_KAFKA_BROKERS=127.0.0.1:$broker_port POSTLY_TEST_PG_BIN=$pg_bin POSTLY_TEST_TANSU=$tansu_bin

cd "$postly_root"
swift build --build-tests >/dev/null
cp "$(swift build --show-bin-path)/PostlyPackageTests.xctest" "$run/tests"
suites='KafkaFailureTests|KafkaLateTopicTests|KafkaConvergenceTests|OutboxRelayBrokerRestartTests'
clean=0
started=$SECONDS
for ((i = 1; i <= runs; i++)); do
  if "$run/tests" --testing-library swift-testing --filter "$suites" >"$run/last.log" 2>&1; then
    clean=$((clean + 1))
  else
    status=$?
    cp "$run/last.log" "$logs/run-$i.log"
    echo "run $i: exit $status (signal $((status > 128 ? status - 128 : 0))); its output: $logs/run-$i.log"
  fi
  printf '\r%d of %d runs, %d clean, %d s' "$i" "$runs" "$clean" "$((SECONDS - started))" >&2
done
echo >&2
echo "$clean of $runs runs clean in $((SECONDS - started)) s"
[ "$clean" = "$runs" ]
