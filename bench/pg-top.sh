#!/usr/bin/env bash
# The statements that took the suite's PostgreSQL's time during a load, from pg_stat_statements
# (deploy/up.sh preloads it): resets the statistics, runs the load given as arguments, prints the
# top statements by total execution time, with calls, mean time, rows and share of the total.
#   bench/pg-top.sh wrk -t2 -c64 -d10s -s ../shared/bench-reference/load/create_post.lua http://127.0.0.1:8080
# PG_TOP (default 15) rows; POSTLY_POSTGRES_PORT (default 5433) the suite's PostgreSQL.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../deploy/lib.sh"
port=${POSTLY_POSTGRES_PORT:-5433}
top=${PG_TOP:-15}
[ $# -gt 0 ] || { echo "usage: $0 LOAD-COMMAND [ARGS...]" >&2; exit 2; }
psql_stats() { "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }

psql_stats -qtAc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset(); SELECT pg_stat_reset_shared('wal')" >/dev/null
"$@"
psql_stats -P pager=off -c "
  WITH s AS (
    SELECT d.datname AS database, s.calls, s.total_exec_time, s.rows, s.query,
           sum(s.total_exec_time) OVER () AS all_time, sum(s.calls) OVER () AS all_calls
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
    WHERE s.query NOT LIKE '%pg_stat_statements%'
  )
  SELECT round((100 * total_exec_time / NULLIF(all_time, 0))::numeric, 1) AS \"%\",
         round(total_exec_time::numeric, 0) AS total_ms, calls,
         round((total_exec_time / calls)::numeric, 3) AS mean_ms, rows,
         replace(database, 'postly_', '') AS db,
         left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS statement
  FROM s ORDER BY total_exec_time DESC LIMIT $top"
psql_stats -qtAc "
  SELECT 'all statements: ' || sum(calls) || ' calls, ' || round(sum(total_exec_time)::numeric) || ' ms of execution; '
         || 'WAL flushes: ' || (SELECT wal_sync FROM pg_stat_wal) FROM pg_stat_statements"
