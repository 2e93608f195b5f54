# Shell functions shared by deploy/up.sh and deploy/test.sh: ports, PostgreSQL, the broker.
# Source it; it changes nothing by itself.

postly_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PKG_CONFIG_PATH="$postly_root/.deps/librdkafka/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
tansu_bin="$postly_root/.deps/venv/bin/tansu"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# PostgreSQL refuses to run as root: its folders belong to the postgres user.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# postgres_start DIR PORT [durable]: a cluster of its own in DIR (created on first use),
# trust authentication on 127.0.0.1 only. Without "durable", fsync is off (tests).
postgres_start() {
  local dir=$1 port=$2 durable=${3:-}
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_postgres "$pg_bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1
  fi
  local options="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200"
  [ "$durable" = durable ] || options="$options -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
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
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "the broker did not start; see $dir/broker.log" >&2
  return 1
}

broker_stop() {
  local dir=$1
  [ -f "$dir/broker.pid" ] && kill "$(cat "$dir/broker.pid")" 2>/dev/null || true
  rm -f "$dir/broker.pid"
}
