#!/usr/bin/env bash
# up.sh's state folder in a checkout other users cannot reach (a clone under /root, mode 700):
# PostgreSQL, which runs as its own user, starts in it (initdb was refused its data folder).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "check-run-dir: skipped (only root runs PostgreSQL as its own user)"; exit 0; }

home=$(mktemp -d) # mode 700, as /root
checkout="$home/postly"
mkdir -p "$checkout/deploy"
cp "$postly_root/deploy/lib.sh" "$checkout/deploy/"
run=$(bash -c 'source "$1/deploy/lib.sh"; run_dir create' run_dir "$checkout")
trap 'postgres_stop "$run/postgres"; rm -rf "$home" "$run"' EXIT
mkdir -p "$run" && chmod 755 "$run" # as up.sh does
postgres_start "$run/postgres" "$(free_port)"
echo "check-run-dir: PostgreSQL runs in the state folder of a checkout in a private folder ($run)"
