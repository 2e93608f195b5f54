#!/usr/bin/env bash
# Benchmarks postly-import on the suite that deploy/up.sh runs (start it first, release build,
# with POSTLY_IMPORT_TOKEN set for its services and exported here): a Flask/MongoDB dump of the
# reference seed's size (50 users, 2,000 posts of about 600 words, 2,100 comments, 5,800 likes,
# made by Tests/Fixtures/flask-dump/make_dump.py --bench) is imported into an empty suite:
#   1. the first run, wall clock (target <= 60 s);
#   2. a second run over the same files, everything `existing` (target <= 15 s);
#   3. from the first run's end until the consumers caught up (target <= 30 s): search finds
#      every published post and the posts service counts every comment.
# Run it under the exclusive lock: flock /work/.machine.lock bench/import.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
root=$postly_root
gateway=${BENCH_GATEWAY:-http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}}

if ! curl -fs -o /dev/null --max-time 2 "$gateway/health/live"; then
  echo "import.sh: no suite at $gateway; start it with deploy/up.sh (POSTLY_IMPORT_TOKEN set)" >&2
  exit 1
fi
: "${POSTLY_IMPORT_TOKEN:?import.sh: export the suite services\' POSTLY_IMPORT_TOKEN}"
configuration=${POSTLY_BUILD_CONFIGURATION:-release}
(cd "$root" && swift build -c "$configuration" --product postly-import >/dev/null)
binary="$(cd "$root" && swift build -c "$configuration" --show-bin-path)/postly-import"

exec python3 "$here/import/run.py" "$binary" "$gateway" \
  "http://127.0.0.1:$(service_port auth)" "http://127.0.0.1:$(service_port posts)" "http://127.0.0.1:$(service_port comments)"
