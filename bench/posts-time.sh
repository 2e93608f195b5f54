#!/usr/bin/env bash
# Posts over time (issue 26) on the running suite (deploy/up.sh, release build; POSTLY_INSTANCES=2
# for the scheduler across two instances), through the gateway, each part ROUNDS times:
#   floor     GET /api/auth/jwks (the reference's floor.lua): what no route can beat here
#   changes   a 100-entry page of the change feed (GET /api/changes?limit=100, anonymous: the
#             resync's first page: 100 posts, each the single-post object with its content,
#             HTML and comments, about 0.9 MB)
#   posts-page the same size read another way: GET /api/posts?limit=100&formats=html
#   changes-small a 100-entry page of comments (about 60 kB): the seed's comments follow its posts
#   rss       the site's RSS feed, cached; rss-304 the same with a matching If-None-Match
#   create    POST /api/posts (the reference's ~600-word draft), with the change feed's log, and
#             create-nolog with its rows dropped by a trigger (the statement still runs), A B A B
#   scheduled SCHEDULED posts due at one instant, written past the service (as posts-scale.sh
#             writes): from the due time to the last one published, and the p99 lag, from the
#             posts' own times (published_at is the due time, updated_at the publish); removed
#             from the posts database afterwards (search keeps its copies)
# Seeds the reference's seeder with 4,000 posts first when the suite has fewer.
#   bench/posts-time.sh [PART...]   ROUNDS (3), DURATION (10 s), WARMUP (3 s), CONNECTIONS (64),
#                                   SCHEDULED (10000); POSTLY_GATEWAY_PORT, POSTLY_POSTGRES_PORT
# Every change-feed request counts against the gateway's requests held per address: start the
# suite with POSTLY_GATEWAY_STREAMS_PER_ADDRESS above CONNECTIONS (100 for the default 64).
# Run it under the machine's exclusive lock (flock /work/.machine.lock ...). Needs wrk and
# ../shared/bench-reference.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
reference=${BENCH_REFERENCE:-$postly_root/../shared/bench-reference}
rounds=${ROUNDS:-3} duration=${DURATION:-10} warmup=${WARMUP:-3} connections=${CONNECTIONS:-64} scheduled=${SCHEDULED:-10000}
gateway=http://127.0.0.1:${POSTLY_GATEWAY_PORT:-8080}
parts=${*:-floor changes posts-page changes-small rss rss-304 create scheduled}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
posts_sql() { "$pg_bin/psql" -h 127.0.0.1 -p "${POSTLY_POSTGRES_PORT:-5433}" -U postgres -d postly_posts -v ON_ERROR_STOP=1 -tAqc "$1"; }
scratch=$(mktemp -d /tmp/postly-posts-time.XXXXXX)
trap 'posts_sql "DROP TRIGGER IF EXISTS bench_drop_change ON changes" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT

seed=/var/tmp/bench/seed/posts-time.json
if [ "$(posts_sql "SELECT count(*) FROM posts")" -lt 4000 ] || ! python3 "$reference/seed.py" --check "$seed" >/dev/null 2>&1; then
  mkdir -p "$(dirname "$seed")"
  python3 "$reference/seed.py" "$gateway" "$seed" --posts 4000 >&2
fi
python3 "$reference/load/prepare.py" "$seed" "$scratch/data.lua"
export BENCH_DATA=$scratch/data.lua

# One wrk run: name, script, extra wrk arguments; prints "name rps p50 p99 errors".
measure() {
  local name=$1 script=$2 output; shift 2
  wrk -t2 -c"$connections" -d"${warmup}s" -s "$script" "$@" "$gateway" >/dev/null 2>&1
  output=$(wrk -t2 -c"$connections" -d"${duration}s" --latency --timeout 30s -s "$script" "$@" "$gateway")
  python3 - "$name" "$output" <<'PY'
import json, re, sys
name, output = sys.argv[1], sys.argv[2]
result = json.loads(re.search(r"BENCH_RESULT (.*)", output).group(1))
ok = result["requests"] - result["status_errors"]
print(f"{name:14} {ok / result['duration_us'] * 1e6:9.0f}/s  p50 {result['p50_us'] / 1000:6.2f} ms  p99 {result['p99_us'] / 1000:6.2f} ms"
      f"  errors {result['status_errors'] + result['socket_errors'] + result['timeouts']}")
PY
}

# wrk scripts: a fixed GET, with the reference's summary line.
get_script() {  # file path
  printf 'dofile("%s/load/common.lua")\nwrk.path = "%s"\n' "$reference" "$2" >"$1"
}
get_script "$scratch/changes.lua" "/api/changes?limit=100"
get_script "$scratch/rss.lua" "/api/feeds/posts.rss"
get_script "$scratch/posts-page.lua" "/api/posts?limit=100&formats=html"
# The cursor after which the next 100 entries are the seed's comments (no post among them).
comments_cursor=$(python3 - "$gateway" <<'PY'
import json, sys, urllib.request
gateway, since = sys.argv[1], ""
while True:
    page = json.load(urllib.request.urlopen(f"{gateway}/api/changes?limit=100{since}"))
    kinds = [change["kind"] for change in page["changes"]]
    if "post" not in kinds and len(kinds) == 100:
        print(since.removeprefix("&since=")); break
    if not page["more"]:
        sys.exit("no page of 100 entries without posts")
    # Start at the first comment of a page that has some.
    if "comment" in kinds and kinds[0] == "post":
        probe = f"{gateway}/api/changes?limit={kinds.index('comment')}{since}"
        since = "&since=" + json.load(urllib.request.urlopen(probe))["next"]
    else:
        since = "&since=" + page["next"]
PY
)
get_script "$scratch/changes-small.lua" "/api/changes?limit=100&since=$comments_cursor"
page=$(curl -fsS "$gateway/api/changes?limit=100" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["changes"]))')
etag=$(curl -fsSI "$gateway/api/feeds/posts.rss" | awk -F': ' 'tolower($1)=="etag"{print $2}' | tr -d '\r')
echo "a change feed page holds $page entries; the RSS feed's ETag is $etag" >&2

for ((round = 1; round <= rounds; round++)); do
  echo "--- round $round"
  for part in $parts; do
    case $part in
      floor) measure floor "$reference/load/floor.lua" ;;
      changes) measure changes "$scratch/changes.lua" ;;
      posts-page) measure posts-page "$scratch/posts-page.lua" ;;
      changes-small) measure changes-small "$scratch/changes-small.lua" ;;
      rss) measure rss "$scratch/rss.lua" ;;
      rss-304) measure rss-304 "$scratch/rss.lua" -H "If-None-Match: $etag" ;;
      create)
        measure create "$reference/load/create_post.lua"
        posts_sql "CREATE OR REPLACE FUNCTION bench_drop_change() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN RETURN NULL; END \$\$;
                   CREATE TRIGGER bench_drop_change BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION bench_drop_change()"
        measure create-nolog "$reference/load/create_post.lua"
        posts_sql "DROP TRIGGER bench_drop_change ON changes" ;;
      scheduled)
        author=$(posts_sql "SELECT author_id FROM posts WHERE status = 'published' LIMIT 1")
        prefix="bench-due-$round-$RANDOM-"
        posts_sql "
          INSERT INTO posts (id, title, content, content_html, excerpt, slug, status, author_id, author_name, read_time,
                             created_at, updated_at, publish_at)
          SELECT '$prefix' || i, 'Due ' || i, 'Words ' || i, '<p>Words ' || i || '</p>', 'Words ' || i, '$prefix' || i, 'scheduled',
                 '$author', 'Bench', 1, now(), now(), date_trunc('second', now()) + interval '3 seconds'
          FROM generate_series(1, $scheduled) AS i;
          INSERT INTO slugs (slug, post_id) SELECT slug, id FROM posts WHERE id LIKE '$prefix%';
          INSERT INTO post_totals (author_id, status, slot, posts) VALUES ('$author', 'scheduled', 0, $scheduled), ('', 'scheduled', 0, $scheduled)
            ON CONFLICT (author_id, status, slot) DO UPDATE SET posts = post_totals.posts + excluded.posts"
        deadline=$((SECONDS + 120))
        until [ "$(posts_sql "SELECT count(*) FROM posts WHERE id LIKE '$prefix%' AND status = 'scheduled'")" = 0 ] || [ $SECONDS -ge $deadline ]; do
          sleep 0.2
        done
        posts_sql "SELECT format('scheduled      %s of %s published, the last %s s after the due time, lag p50 %s s, p99 %s s',
                     count(*) FILTER (WHERE status = 'published'), count(*),
                     round(extract(epoch FROM max(updated_at) - min(published_at))::numeric, 2),
                     round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - published_at))::numeric, 2),
                     round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM updated_at - published_at))::numeric, 2))
                   FROM posts WHERE id LIKE '$prefix%'"
        # The events on their way to the consumers first, so the next part measures alone.
        until [ "$(posts_sql "SELECT count(*) FROM outbox WHERE sent_at IS NULL")" = 0 ]; do sleep 0.5; done
        sleep 10
        posts_sql "
          DELETE FROM slugs WHERE post_id LIKE '$prefix%';
          DELETE FROM changes WHERE kind = 'post' AND id LIKE '$prefix%';
          UPDATE post_totals SET posts = posts - $scheduled WHERE author_id IN ('$author', '') AND status = 'published' AND slot = 0;
          DELETE FROM posts WHERE id LIKE '$prefix%';
          SELECT pg_notify('postly_posts_read_model', 'posts-time' || chr(10) || '*')" >/dev/null ;;
    esac
  done
done
