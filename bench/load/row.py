"""One row of bench/load.sh's table from a route's wrk output: answers a second, p50 and p99
in ms, errors. usage: row.py WRK_OUTPUT LEVEL ROUTE"""
import sys

from postly_suite.measure import wrk_result

text, level, route = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
r = wrk_result(text)
if r is None:
    print(f"{level:<6} {route:<12} no result: {text.strip()[-200:]}")
    sys.exit()
seconds = r["duration_us"] / 1e6
errors = r["status_errors"] + r["socket_errors"] + r["timeouts"]
print(f"{level:<6} {route:<12} {(r['requests'] - r['status_errors']) / seconds:10.1f} {r['p50_us'] / 1000:9.1f} {r['p99_us'] / 1000:9.1f} {errors:8d}")
