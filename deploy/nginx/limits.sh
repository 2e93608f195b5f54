#!/bin/sh
# Writes the gateway's per-address limits from the environment, as the three small files
# deploy/nginx/postly.conf includes (nginx takes rates, bursts and connection counts only as
# literals). One script for both ways of running, like cors-origins.sh: deploy/lib.sh calls it
# with the folder to write; the nginx image runs it from /docker-entrypoint.d/ (POSIX sh).
#   limits.sh [DIR]      (default /etc/nginx)
#
#   POSTLY_GATEWAY_SIGNIN_PER_MINUTE  30  register and sign-in requests per address and minute
#   POSTLY_GATEWAY_SIGNIN_BURST       10  more of them allowed at once before 429
#   POSTLY_GATEWAY_STREAMS_PER_ADDRESS 20 requests held open at once per address: notification
#                                        streams and change-feed requests
set -eu
dir=${1:-/etc/nginx}

# number NAME DEFAULT: the variable's value when it is a positive whole number, else DEFAULT.
number() {
  eval "value=\${$1:-}"
  case $value in
    '' ) echo "$2" ;;
    *[!0-9]* | 0 ) echo "limits.sh: ignoring $1=$value (not a positive whole number)" >&2; echo "$2" ;;
    * ) echo "$value" ;;
  esac
}
signin_rate=$(number POSTLY_GATEWAY_SIGNIN_PER_MINUTE 30)
signin_burst=$(number POSTLY_GATEWAY_SIGNIN_BURST 10)
streams=$(number POSTLY_GATEWAY_STREAMS_PER_ADDRESS 20)
# A refused client may try again once the rate has made room for one more request.
signin_retry=$(( (60 + signin_rate - 1) / signin_rate ))

cat >"$dir/postly-limits.conf" <<CONF
# Written by deploy/nginx/limits.sh from POSTLY_GATEWAY_*; included at the http level.
limit_req_zone \$binary_remote_addr zone=postly_signin:10m rate=${signin_rate}r/m;
# Every change-feed request counts, waiting or not: nginx reads \$arg_wait as the first of
# any case (Wait=0&wait=30), the service only "wait", so an exception was a way around.
limit_conn_zone \$binary_remote_addr zone=postly_streams:10m;
CONF
cat >"$dir/postly-limits-signin.conf" <<CONF
# Written by deploy/nginx/limits.sh: register and sign-in, per client address.
limit_req zone=postly_signin burst=$signin_burst nodelay;
set \$postly_retry_after $signin_retry;
CONF
cat >"$dir/postly-limits-streams.conf" <<CONF
# Written by deploy/nginx/limits.sh: requests held open (notification streams, change-feed
# long polls), per client address.
limit_conn postly_streams $streams;
set \$postly_retry_after 10;
CONF
