"""One post to 1,000 followers on 50 shared inboxes (bench/federation.sh says what and how)."""
import concurrent.futures
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse

from federation_test import Peer
from postly_suite.client import Client
from postly_suite.suite import eventually

PEERS = int(os.environ.get("BENCH_PEERS", "50"))
ACTORS = int(os.environ.get("BENCH_ACTORS_PER_PEER", "20"))


def signing(service):
    """postly_federation_signing_seconds' sum and count, from the service's /metrics."""
    text = service.call("GET", "/metrics").body
    values = {}
    for name in ("sum", "count"):
        found = re.search(rf"^postly_federation_signing_seconds_{name}(?:{{[^}}]*}})? ([0-9.e+-]+)$", text, re.M)
        values[name] = float(found.group(1)) if found else 0.0
    return values["sum"], values["count"]


def main(gateway_url, service_url):
    client, service = Client.at(gateway_url), Client.at(service_url)
    host = urllib.parse.urlsplit(gateway_url).netloc
    author = client.register("Bench Author")
    token, user_id = author["accessToken"], author["user"]["userId"]
    found, _ = eventually(30, lambda: client.call("GET", f"/.well-known/webfinger?resource=acct:{user_id}@{host}").status == 200)
    if not found:
        sys.exit("the federation service did not learn of the author")
    handle = client.call("GET", f"/.well-known/webfinger?resource=acct:{user_id}@{host}").body["subject"].split(":")[1].split("@")[0]
    logs = tempfile.mkdtemp(prefix="postly-federation-bench.")
    peers = []
    try:
        # Ten at a time: fifty Pythons importing bovine at once on two cores outlast a peer's start-up wait.
        for first in range(0, PEERS, 10):
            starting = [Peer(os.path.join(logs, f"peer-{n}.log"), actors=ACTORS) for n in range(first, min(first + 10, PEERS))]
            peers.extend(starting)
            for peer in starting:
                peer.__enter__()
        print(f"{PEERS} peers up (logs in {logs}); {PEERS * ACTORS} follows", flush=True)
        started = time.monotonic()

        def follow(job):
            peer, n = job
            return peer.control.call("POST", "/control/follow", body={"acct": f"{handle}@{host}", "actor": n}).body.get("status")

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(follow, [(peer, n) for peer in peers for n in range(ACTORS)]))
        followers, _ = eventually(120, lambda: (client.call("GET", f"/ap/users/{user_id}/followers").body or {}).get("totalItems") == PEERS * ACTORS)
        print(f"follows: {statuses.count(202)} of {len(statuses)} accepted, {PEERS * ACTORS if followers else '?'} followers, "
              f"{time.monotonic() - started:.1f} s", flush=True)
        accepted, _ = eventually(120, lambda: sum(len(p.received("Accept")) for p in peers) >= PEERS * ACTORS)
        print(f"accepts delivered: {'all' if accepted else 'not all'}", flush=True)

        before = signing(service)
        sent = time.time()
        post = client.call("POST", "/api/posts", token, {"title": "To a thousand followers", "content": "Fan-out.", "status": "published"}).body
        answered = time.time()
        article = f"http://{host}/ap/posts/{post['_id']}"

        def arrivals():
            entries = [peer.received("Create", article) for peer in peers]
            return entries if all(entries) else None

        entries, _ = eventually(60, arrivals)
        entries = entries or [peer.received("Create", article) for peer in peers]
        delivered = [e[0] for e in entries if e]
        verified = [e for e in delivered if e["bovine"] and e["httpsig"] and e["answered"] == 202]
        times = sorted(e["at"] - answered for e in delivered)
        after = signing(service)
        count = after[1] - before[1]
        print(f"Create: {len(delivered)} of {PEERS} shared inboxes, {sum(len(e) for e in entries)} deliveries in all, "
              f"{len(verified)} signed (bovine and httpsig) and acknowledged")
        if times:
            print(f"from the post's 201 ({(answered - sent) * 1000:.0f} ms after the request): first {times[0]:.3f} s, "
                  f"median {statistics.median(times):.3f} s, last {times[-1]:.3f} s")
        if count:
            print(f"signing: {count:.0f} deliveries signed, {(after[0] - before[0]) / count * 1000:.2f} ms each (mean)")
    finally:
        for peer in peers:
            peer.__exit__(None, None, None)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
