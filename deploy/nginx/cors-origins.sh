#!/bin/sh
# Writes the gateway's allowed CORS origins, from POSTLY_CORS_ORIGINS (comma- or
# space-separated origins, or `*` for every origin), as entries of the `map` in
# deploy/nginx/postly.conf. One script for both ways of running: deploy/lib.sh calls it with
# the file to write; the nginx image runs it from /docker-entrypoint.d/ before nginx starts
# (POSIX sh: the image is Alpine).
#   cors-origins.sh [FILE]      (default /etc/nginx/postly-cors-origins.conf)
set -euf  # -f: `*` is an origin here, never a file name
out=${1:-/etc/nginx/postly-cors-origins.conf}
origins=${POSTLY_CORS_ORIGINS-http://localhost:3000}
every=0
for origin in $(echo "$origins" | tr ',' ' '); do [ "$origin" = '*' ] && every=1; done
{
  echo "# Written by deploy/nginx/cors-origins.sh from POSTLY_CORS_ORIGINS."
  echo "default $every;"
  for origin in $(echo "$origins" | tr ',' ' '); do
    case $origin in
      '*') ;;
      # An origin is scheme://host[:port]: nothing that could break out of the quotes.
      http://* | https://*)
        case $origin in
          *[!A-Za-z0-9.:/-]*) echo "cors-origins.sh: ignoring the malformed origin $origin" >&2 ;;
          *) echo "\"${origin%/}\" 1;" ;;
        esac ;;
      *) echo "cors-origins.sh: ignoring $origin (not http(s)://host[:port] or *)" >&2 ;;
    esac
  done
} >"$out"
