"""Waits until search finds `count` posts with `word`, polling every 50 ms over one kept-alive
connection (a curl, awk and bc a poll took a tenth of the machine from the service measured),
and prints how long that took from `started` (Unix seconds) and from the first found.
Usage: found.py PORT WORD COUNT STARTED."""
import http.client, sys, time

port, word, count, started = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
connection = None


def found():
    global connection
    try:
        connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", f"/api/posts/search?q={word}&limit=1")
        response = connection.getresponse()
        response.read()
        return int(response.getheader("X-Total-Count") or 0) if response.status == 200 else 0
    except (OSError, http.client.HTTPException):  # not listening yet, or restarted
        connection = None
        return 0


first = first_total = None
while (total := found()) < count:
    if first is None and total > 0:
        first, first_total = time.time(), total
    if time.time() - started > 600:
        sys.exit(f"only {total} of {count} after 600 s")
    time.sleep(0.05)
done = time.time()
first, first_total = (first, first_total) if first is not None else (done, 0)
print(f"{count} waiting post events searchable {done - started:.2f} s after the start: {count / (done - started):.0f} a second")
if done > first:
    print(f"  from the first found ({first_total}) to the last: {done - first:.2f} s, {(count - first_total) / (done - first):.0f} a second")
