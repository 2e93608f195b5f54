# shellcheck shell=bash
# Shell functions shared by deploy/up.sh and deploy/test.sh: ports, PostgreSQL, the broker.
# Source it; it changes nothing by itself.

postly_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PKG_CONFIG_PATH="$postly_root/.deps/librdkafka/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# The Python the scripts share (deploy/postly_suite), importable by every python3 they run.
export PYTHONPATH="$postly_root/deploy${PYTHONPATH:+:$PYTHONPATH}"
tansu_bin="$postly_root/.deps/venv/bin/tansu"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

# run_dir [create]: where up.sh keeps its state, POSTLY_RUN_DIR or .run beside the code, as a
# path without links. PostgreSQL runs as its own user and nginx's workers as nobody: when they
# cannot pass through the folders above it (a clone under /root, mode 700), "create" makes .run
# a link to a folder of its own under /var/lib/postly.
run_dir() {
  local run=${POSTLY_RUN_DIR:-$postly_root/.run}
  if [ "${1:-}" = create ] && [ ! -e "$run" ] && [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$(dirname "$run")"; then
    local elsewhere
    elsewhere=/var/lib/postly/$(printf '%s' "$run" | sha256sum | cut -c1-16)
    mkdir -p "$elsewhere"
    ln -s "$elsewhere" "$run"
  fi
  readlink -m "$run"
}

free_port() {
  python3 -c 'from postly_suite.suite import free_port; print(free_port())'
}

# PostgreSQL refuses to run as root: its folders belong to the postgres user.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# postgres_start DIR PORT [durable]: a cluster of its own in DIR (created on first use),
# trust authentication on 127.0.0.1 only. Without "durable", fsync is off (tests); with it,
# pg_stat_statements records every statement's cost (bench/pg-top.sh reads it), and the buffer
# cache is 1 GB instead of 128 MB: the seven databases' indexes at 100,000 posts and more do not
# fit in 128 MB, and creates then read pages back from the kernel's cache (memory is taken as
# pages are used).
postgres_start() {
  local dir=$1 port=$2 durable=${3:-}
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_postgres "$pg_bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1
  fi
  # lz4 compresses and reads the large values (a post's texts, an event in the outbox) four
  # times faster than the default pglz, and smaller.
  local options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=500 -c default_toast_compression=lz4"
  if [ "$durable" = durable ]; then
    options="$options -c shared_preload_libraries=pg_stat_statements -c shared_buffers=1GB"
  else
    options="$options -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  as_postgres "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -o "$options" start >/dev/null
}

postgres_stop() {
  local dir=$1
  [ -f "$dir/data/postmaster.pid" ] && as_postgres "$pg_bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
}

# broker_start DIR PORT: a tansu broker (memory storage) with its pid in DIR/broker.pid.
broker_start() {
  local dir=$1 port=$2
  mkdir -p "$dir"
  "$tansu_bin" broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://127.0.0.1:$port" \
    >"$dir/broker.log" 2>&1 &
  echo $! >"$dir/broker.pid"
  wait_port "$port" 5 && return 0
  echo "the broker did not start; see $dir/broker.log" >&2
  return 1
}

# tansu ignores SIGTERM while clients are connected: SIGKILL after a moment. Its storage
# is memory anyway. Its end is waited for: a broker started at once on the same port found
# it still taken ("Address in use") and died.
broker_stop() {
  local dir=$1 pid
  [ -f "$dir/broker.pid" ] || return 0
  pid=$(cat "$dir/broker.pid")
  kill "$pid" 2>/dev/null || true
  if ! wait_exit "$pid" 1; then
    kill -9 "$pid" 2>/dev/null || true
    wait_exit "$pid" 5 || true
  fi
  rm -f "$dir/broker.pid"
}

# --- the suite: services, their ports, the gateway (deploy/up.sh, deploy/check-gateway.sh) ---

# Every service of the contract, in start order, and its local port (POSTLY_<NAME>_PORT).
postly_all_services=(auth posts comments search images notifications federation)

# service_port NAME [INSTANCE]: where instance INSTANCE (1, the default, 2, ...) of the
# service listens: POSTLY_<NAME>_PORT for the first, POSTLY_<NAME>_PORT_<INSTANCE> or 100
# per instance above the first for the others.
service_port() {
  local name=$1 instance=${2:-1} var default
  if [ "$instance" -gt 1 ]; then
    var="POSTLY_${name^^}_PORT_$instance"
    echo "${!var:-$(($(service_port "$name") + 100 * (instance - 1)))}"
    return
  fi
  var="POSTLY_${name^^}_PORT"
  case $name in
    auth) default=8081 ;; posts) default=8082 ;; comments) default=8083 ;;
    search) default=8084 ;; images) default=8085 ;; notifications) default=8086 ;;
    federation) default=8087 ;;
    *) echo "unknown service $name" >&2; return 1 ;;
  esac
  echo "${!var:-$default}"
}

# The services Package.swift declares (its executables postly-<name>), one per line.
declared_services() {
  python3 -c 'from postly_suite.suite import declared_services; print(*declared_services(), sep="\n")'
}

# wait_port PORT [SECONDS]: until something accepts connections on 127.0.0.1:PORT.
wait_port() {
  local port=$1 seconds=${2:-10} i
  for ((i = 0; i < seconds * 20; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# port_in_use PORT: true when something already listens on 127.0.0.1:PORT.
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# service_instances NAME: how many instances of the service run behind the gateway:
# POSTLY_<NAME>_INSTANCES, or POSTLY_INSTANCES for every service, or 1.
service_instances() {
  local var="POSTLY_${1^^}_INSTANCES"
  echo "${!var:-${POSTLY_INSTANCES:-1}}"
}

# instance_name NAME INSTANCE: what names an instance's pid and log files: posts, posts-2, ...
instance_name() {
  if [ "$2" -gt 1 ]; then echo "$1-$2"; else echo "$1"; fi
}

# gateway_config DIR LISTEN_PORT [UPSTREAM_HOST]: writes DIR/nginx.conf, which includes
# deploy/nginx/postly.conf (the configuration docker-compose uses too), and
# DIR/postly-upstreams.conf with the local part: the listen address and each service's
# instances (service_instances) at UPSTREAM_HOST:<their ports>. Every path nginx writes stays
# inside DIR.
gateway_config() {
  local dir=$1 port=$2 host=${3:-127.0.0.1} name instance servers
  mkdir -p "$dir/temp"
  {
    echo "# Written by deploy/lib.sh gateway_config; the routes are in deploy/nginx/postly.conf."
    echo "listen 127.0.0.1:$port;"
    for name in "${postly_all_services[@]}"; do
      echo "set \$postly_$name postly_$name;"
    done
  } >"$dir/postly-upstreams.conf"
  ln -sf "$postly_root/deploy/nginx/postly-headers.conf" "$dir/postly-headers.conf"
  "$postly_root/deploy/nginx/cors-origins.sh" "$dir/postly-cors-origins.conf"
  "$postly_root/deploy/nginx/limits.sh" "$dir"
  # The variables above name these groups: nginx keeps connections to each service open
  # (without them every request pays a new TCP connection), and max_fails=0 never benches a
  # service that was down a moment ago. With several instances, a request an instance could
  # not take (refused, reset before an answer) goes to the next one; nginx does that only for
  # idempotent methods and for writes with an Idempotency-Key (postly.conf).
  for name in "${postly_all_services[@]}"; do
    servers=""
    for ((instance = 1; instance <= $(service_instances "$name"); instance++)); do
      servers+=" server $host:$(service_port "$name" "$instance") max_fails=0;"
    done
    echo "upstream postly_$name {$servers keepalive 32; }"
  done >"$dir/postly-upstream-pools.conf"
  cat >"$dir/nginx.conf" <<CONF
# Written by deploy/lib.sh gateway_config: the local frame around deploy/nginx/postly.conf.
worker_processes 2;
# A stop (SIGQUIT) waits for open requests; a notification stream would hold a worker for
# its hour, past the master's SIGKILL.
worker_shutdown_timeout 5s;
pid $dir/nginx.pid;
error_log stderr notice;
events { worker_connections 1024; }
http {
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 65s;
    client_body_temp_path $dir/temp/client_body;
    proxy_temp_path $dir/temp/proxy;
    fastcgi_temp_path $dir/temp/fastcgi;
    uwsgi_temp_path $dir/temp/uwsgi;
    scgi_temp_path $dir/temp/scgi;
    include $dir/postly-upstream-pools.conf;
    include $postly_root/deploy/nginx/postly.conf;
}
CONF
}

# nginx's flags for a configuration of gateway_config's in DIR.
gateway_nginx() {
  local dir=$1; shift
  nginx -p "$dir" -e stderr -c "$dir/nginx.conf" "$@"
}

# gateway_start DIR PORT LOG: validates and starts nginx in the foreground (in the
# background of the caller), its output (access log as JSON lines, errors) appended to LOG.
gateway_start() {
  local dir=$1 port=$2 log=$3
  if ! gateway_nginx "$dir" -t -q 2>>"$log"; then
    echo "the gateway configuration is invalid; see $log" >&2
    return 1
  fi
  if port_in_use "$port"; then
    echo "127.0.0.1:$port is already in use: the gateway cannot listen there" >&2
    return 1
  fi
  # exec: the background job's pid is nginx's master itself.
  (exec nginx -p "$dir" -e stderr -c "$dir/nginx.conf" -g 'daemon off;' >>"$log" 2>&1) &
  echo $! >"$dir/nginx.master.pid"
  if ! wait_port "$port" 10 || ! is_running "$!" nginx; then
    echo "the gateway did not start on 127.0.0.1:$port; see $log" >&2
    return 1
  fi
}

# gateway_stop DIR: graceful stop (SIGQUIT lets open requests finish).
gateway_stop() {
  local dir=$1 pid
  [ -f "$dir/nginx.master.pid" ] || return 0
  pid=$(cat "$dir/nginx.master.pid")
  if is_running "$pid" nginx; then
    kill -QUIT "$pid" 2>/dev/null || true
    wait_exit "$pid" 10 || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/nginx.master.pid"
}

# is_running PID WORD: the process PID is alive and its command line contains WORD (so a
# stale pid file never makes us signal a stranger that reused the number).
is_running() {
  local pid=$1 word=$2
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$word"
}

# wait_exit PID SECONDS: until the process is gone; false if it is still there.
wait_exit() {
  local pid=$1 seconds=$2 i
  for ((i = 0; i < seconds * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    # A child of ours that exited stays a zombie until reaped; it is gone all the same.
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}
