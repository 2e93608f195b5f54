#!/usr/bin/env bash
# deploy/retry.sh: a command that fails for a while is tried again until it succeeds, and one
# that keeps failing stops after the tries asked for, with its own status.
set -euo pipefail
source "$(dirname "$0")/retry.sh"
calls=$(mktemp)
trap 'rm -f "$calls"' EXIT

# Fails until it has been called $1 times, then succeeds.
succeeds_on_call() {
  echo >>"$calls"
  [ "$(wc -l <"$calls")" -ge "$1" ] || return 7
}

: >"$calls"
with_retries 4 0 succeeds_on_call 3 2>/dev/null || { echo "check-retry: a command that succeeds on its third call failed with four tries" >&2; exit 1; }
[ "$(wc -l <"$calls")" -eq 3 ] || { echo "check-retry: called $(wc -l <"$calls") times, not 3" >&2; exit 1; }

: >"$calls"
status=0
with_retries 2 0 succeeds_on_call 3 2>/dev/null || status=$?
[ "$status" -eq 7 ] || { echo "check-retry: two tries of a command that needs three gave status $status, not its own 7" >&2; exit 1; }
[ "$(wc -l <"$calls")" -eq 2 ] || { echo "check-retry: called $(wc -l <"$calls") times, not 2" >&2; exit 1; }
echo "check-retry: 2 passed"
