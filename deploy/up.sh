#!/usr/bin/env bash
# Brings the whole suite up on this machine from nothing, as root: installs what is
# missing (deploy/install.sh), then starts PostgreSQL, the broker, every service that
# Package.swift declares (built in release mode) and the gateway on 127.0.0.1:8080, and
# says where each listens and logs. Running it again restarts everything cleanly;
# deploy/down.sh stops it. State lives in .run/ (PostgreSQL's data survives restarts; the
# broker keeps its topics and messages in memory only, so a restart empties it); in a checkout
# other users cannot reach (under /root), .run is a link to a folder under /var/lib/postly.
# Configuration (environment, with these defaults):
#   POSTLY_GATEWAY_PORT=8080  POSTLY_POSTGRES_PORT=5433  POSTLY_BROKER_PORT=9092
#   POSTLY_AUTH_PORT=8081 POSTLY_POSTS_PORT=8082 POSTLY_COMMENTS_PORT=8083
#   POSTLY_SEARCH_PORT=8084 POSTLY_IMAGES_PORT=8085 POSTLY_NOTIFICATIONS_PORT=8086
#   POSTLY_FEDERATION_PORT=8087
#   PUBLIC_BASE_URL=http://127.0.0.1:<gateway port> (where the fediverse reaches the gateway)
#   LOG_LEVEL=info  POSTLY_BUILD_CONFIGURATION=release  POSTLY_READY_TIMEOUT=60 (seconds)
#   POSTLY_RUN_DIR=.run (where state, logs and pids live; the system tests use a folder of their own)
#   POSTLY_CORS_ORIGINS=http://localhost:3000 (browser origins the gateway allows; * for any)
#   POSTLY_INSTANCES=1 (how many of each service run behind the gateway; the second at
#   POSTLY_<NAME>_PORT_2, by default 100 above the first, and so on; POSTLY_<NAME>_INSTANCES
#   for one service)
#   POSTLY_SERVICE_ENVIRONMENTS=<folder> (each instance started with exactly the variables of
#   <folder>/<name>[-<instance>].env, one NAME=value a line, instead of the ones below: how
#   deploy/system_test.py runs the services as the Kubernetes manifests configure them)
# Any other variable set when calling it (PEXELS_API_KEY, POSTLY_IMPORT_TOKEN for postly-import,
# ...) reaches the services.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/install.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"

gateway_port=${POSTLY_GATEWAY_PORT:-8080}
pg_port=${POSTLY_POSTGRES_PORT:-5433}
broker_port=${POSTLY_BROKER_PORT:-9092}
configuration=${POSTLY_BUILD_CONFIGURATION:-release}
ready_timeout=${POSTLY_READY_TIMEOUT:-60}
export LOG_LEVEL=${LOG_LEVEL:-info}
run=$(run_dir create)
logs="$run/logs"

say() { printf '[up] %s\n' "$*" >&2; }

# Whatever an earlier run left running stops first: running up.sh twice restarts cleanly.
"$here/down.sh" --quiet
mkdir -p "$logs"
chmod 755 "$run" # PostgreSQL (its own user) and nginx's workers (nobody) reach inside

mapfile -t services < <(declared_services)
say "services declared in Package.swift: ${services[*]:-none yet}"

# Ports first, so a clash is reported before anything starts.
for port in "$gateway_port" "$pg_port" "$broker_port"; do
  if port_in_use "$port"; then say "127.0.0.1:$port is already in use; set the POSTLY_*_PORT variables"; exit 1; fi
done
for name in "${services[@]}"; do
  for ((instance = 1; instance <= $(service_instances "$name"); instance++)); do
    port=$(service_port "$name" "$instance")
    if port_in_use "$port"; then say "the $name port 127.0.0.1:$port is already in use"; exit 1; fi
  done
done

# Build before starting anything, so a compile error leaves nothing half up.
cd "$postly_root"
for name in "${services[@]}"; do
  say "swift build -c $configuration --product postly-$name"
  swift build -c "$configuration" --product "postly-$name"
done
[ ${#services[@]} -eq 0 ] || bin_dir=$(swift build -c "$configuration" --show-bin-path)

say "PostgreSQL on 127.0.0.1:$pg_port (data in $run/postgres/data)"
postgres_start "$run/postgres" "$pg_port" durable
ln -sf ../postgres/postgres.log "$logs/postgres.log"
psql_admin() { "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -v ON_ERROR_STOP=1 -tAq "$@"; }
psql_admin -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
for name in "${services[@]}"; do
  database="postly_$name"
  if [ -z "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$database'")" ]; then
    psql_admin -c "CREATE DATABASE $database"
    say "created database $database"
  fi
done

say "broker (tansu, memory only) on 127.0.0.1:$broker_port"
broker_start "$run/broker" "$broker_port"
ln -sf ../broker/broker.log "$logs/broker.log"
for topic in postly.users postly.posts postly.comments postly.deadletter; do
  # Idempotent: a topic that already exists (a service created it first) is fine.
  output=$("$tansu_bin" topic create "$topic" --partitions 3 --broker "tcp://127.0.0.1:$broker_port" 2>&1) \
    || grep -qiE 'already.?exists' <<<"$output" \
    || { echo "$output" >>"$logs/broker.log"; say "could not create topic $topic; see $logs/broker.log"; exit 1; }
done

# Posts stored by an earlier renderer are rendered again first (unchanged ones are left alone).
[[ " ${services[*]} " != *" posts "* ]] || (
  export POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_PASSWORD="" \
    POSTGRES_DATABASE=postly_posts KAFKA_BROKERS="127.0.0.1:$broker_port"
  "$bin_dir/postly-posts" rerender >>"$logs/posts.log" 2>&1 || true
)
# Where services reach auth's keys and the posts service: the first instance, or with several
# the gateway, which spreads them as a cluster's Service would (and outlives one's crash).
auth_url="http://127.0.0.1:$(service_port auth)" posts_url="http://127.0.0.1:$(service_port posts)"
[ "$(service_instances auth)" -eq 1 ] || auth_url="http://127.0.0.1:$gateway_port"
[ "$(service_instances posts)" -eq 1 ] || posts_url="http://127.0.0.1:$gateway_port"
for name in "${services[@]}"; do
  for ((instance = 1; instance <= $(service_instances "$name"); instance++)); do
    port=$(service_port "$name" "$instance") instance_name=$(instance_name "$name" "$instance")
    say "postly-$instance_name on 127.0.0.1:$port"
    # Each service reads its configuration from these (see README: Configuration).
    (
      if [ -n "${POSTLY_SERVICE_ENVIRONMENTS:-}" ]; then
        mapfile -t environment <"$POSTLY_SERVICE_ENVIRONMENTS/$instance_name.env"
        exec env -i "${environment[@]}" "$bin_dir/postly-$name" >>"$logs/$instance_name.log" 2>&1
      fi
      export PORT=$port HOST=127.0.0.1 \
        POSTGRES_HOST=127.0.0.1 POSTGRES_PORT=$pg_port POSTGRES_USER=postgres POSTGRES_PASSWORD="" \
        POSTGRES_DATABASE="postly_$name" KAFKA_BROKERS="127.0.0.1:$broker_port" \
        KAFKA_SESSION_TIMEOUT_MS="${KAFKA_SESSION_TIMEOUT_MS:-2000}" KAFKA_FETCH_WAIT_MAX_MS="${KAFKA_FETCH_WAIT_MAX_MS:-100}" \
        AUTH_JWKS_URL="${AUTH_JWKS_URL:-$auth_url/api/auth/jwks}" POSTS_URL="$posts_url" \
        PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://127.0.0.1:$gateway_port}"
      exec "$bin_dir/postly-$name" >>"$logs/$instance_name.log" 2>&1
    ) &
    echo $! >"$run/$instance_name.pid"
  done
done

say "gateway (nginx) on 127.0.0.1:$gateway_port"
gateway_config "$run/nginx" "$gateway_port" 127.0.0.1
gateway_start "$run/nginx" "$gateway_port" "$logs/gateway.log"

# Wait until each service says it is ready (its database and broker reachable).
failed=()
for name in "${services[@]}"; do
  for ((instance = 1; instance <= $(service_instances "$name"); instance++)); do
    port=$(service_port "$name" "$instance") instance_name=$(instance_name "$name" "$instance") deadline=$((SECONDS + ready_timeout))
    until curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$port/health/ready"; do
      if ! is_running "$(cat "$run/$instance_name.pid")" "postly-$name"; then
        say "postly-$instance_name exited; the end of $logs/$instance_name.log:"; tail -20 "$logs/$instance_name.log" >&2; failed+=("$instance_name"); break
      fi
      if [ "$SECONDS" -ge "$deadline" ]; then say "postly-$instance_name is not ready after ${ready_timeout}s; see $logs/$instance_name.log"; failed+=("$instance_name"); break; fi
      sleep 0.5
    done
  done
done

{
  echo
  echo "Postly is up. Stop it with deploy/down.sh."
  printf '  %-21s %-42s %s\n' "what" "where" "log"
  printf '  %-21s %-42s %s\n' gateway "http://127.0.0.1:$gateway_port/api/" "$logs/gateway.log"
  for name in "${services[@]}"; do
    for ((instance = 1; instance <= $(service_instances "$name"); instance++)); do
      instance_name=$(instance_name "$name" "$instance")
      printf '  %-21s %-42s %s\n' "postly-$instance_name" "http://127.0.0.1:$(service_port "$name" "$instance")" "$logs/$instance_name.log"
    done
  done
  for name in "${postly_all_services[@]}"; do
    [[ " ${services[*]} " == *" $name "* ]] || printf '  %-21s %-42s %s\n' "$name" "not declared yet: its routes answer 503" "-"
  done
  printf '  %-21s %-42s %s\n' postgresql "127.0.0.1:$pg_port user postgres" "$logs/postgres.log"
  printf '  %-21s %-42s %s\n' broker "127.0.0.1:$broker_port (memory only)" "$logs/broker.log"
  echo "  Databases: ${services[*]/#/postly_}${services[*]:+ }(psql -h 127.0.0.1 -p $pg_port -U postgres postly_<service>)"
  echo "  Each service also serves /health/live, /health/ready, /metrics and /openapi.json on its own port."
} >&2
[ ${#failed[@]} -eq 0 ] || { say "not ready: ${failed[*]}"; exit 1; }
