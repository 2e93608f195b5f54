# What bench/search.sh and bench/search-backlog.sh start alike, sourced by both (after
# deploy/lib.sh, with $configuration set): a run folder removed on exit, the search binary
# built, a PostgreSQL and a broker of their own ($pg_port, $broker_port), and the auth keys
# the service waits for: RFC 8037's example key, served from the run folder ($keys_port; no
# query here needs a token). The script sets $service_pid for what it starts.
run=$(mktemp -d /tmp/postly-search-bench.XXXXXX)
chmod 755 "$run"
service_pid=
stop_service() {
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null || true
  service_pid=
}
cleanup() {
  stop_service
  [ -z "${keys_pid:-}" ] || kill "$keys_pid" 2>/dev/null || true
  gateway_stop "$run/nginx" 2>/dev/null || true
  broker_stop "$run/broker"
  postgres_stop "$run/postgres"
  rm -rf "$run"
}
trap cleanup EXIT

(cd "$postly_root" && swift build -c "$configuration" --product postly-search)
binary="$(cd "$postly_root" && swift build -c "$configuration" --show-bin-path)/postly-search"

pg_port=$(free_port)
broker_port=$(free_port)
postgres_start "$run/postgres" "$pg_port"
broker_start "$run/broker" "$broker_port"

mkdir -p "$run/keys"
echo '{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"bench","alg":"EdDSA","use":"sig"}]}' >"$run/keys/jwks"
keys_port=$(free_port)
python3 -m http.server "$keys_port" --bind 127.0.0.1 --directory "$run/keys" >/dev/null 2>&1 &
keys_pid=$!
