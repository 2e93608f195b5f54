# shellcheck shell=bash
# with_retries TRIES PAUSE COMMAND...: runs COMMAND until it succeeds, at most TRIES times,
# PAUSE seconds apart; its status is the last try's. For what reaches the network while a new
# machine is installed: there the archive's name sometimes does not resolve for a moment
# ("Temporary failure resolving 'deb.debian.org'"), `apt-get update` only warns about it, and
# the install after it fails (a fresh machine's `.ci/run` did, once in five).
with_retries() {
  local tries=$1 pause=$2 attempt status
  shift 2
  for ((attempt = 1; ; attempt++)); do
    status=0
    "$@" || status=$?
    [ "$status" -eq 0 ] && return 0
    [ "$attempt" -lt "$tries" ] || return "$status"
    printf '[retry] %s failed (try %d of %d); again in %d s\n' "$1" "$attempt" "$tries" "$pause" >&2
    sleep "$pause"
  done
}
