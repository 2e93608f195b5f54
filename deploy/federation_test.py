#!/usr/bin/env python3
"""The federation journey of the system tests (deploy/system_test.py runs it on its suite): a
real ActivityPub implementation plays the remote instance, on loopback only. PyPI bovine's
test server (deploy/fediverse/peer.py, in .deps/federation) resolves an author through our
WebFinger, follows them with a signed Follow and must receive a signed Accept within 2 s whose
signature verifies with bovine and, independently, with PyPI httpsig; then the author publishes,
edits and deletes through the gateway and the peer receives Create, Update and Delete within
2 s each, signatures and digests valid; a draft never leaves. Negative cases: unsigned, body
changed after signing, a Date 13 hours old, actor other than the signer: 401; a second Follow:
one follower; a peer answering 500: retried; 410: not retried.

The suite must run with FEDERATION_ALLOW_PRIVATE_NETWORKS=1 (the peer is on loopback) and a
short FEDERATION_RETRY_BASE_MS (ENVIRONMENT below)."""
import json
import os
import subprocess
import sys
import time
import urllib.parse

from postly_suite import ROOT
from postly_suite.client import Client
from postly_suite.suite import eventually, free_port

PYTHON = os.path.join(ROOT, ".deps", "federation", "bin", "python")
PEER = os.path.join(ROOT, "deploy", "fediverse", "peer.py")
# What the suite's federation service needs for a peer on loopback, and retries in 100 ms.
ENVIRONMENT = {"FEDERATION_ALLOW_PRIVATE_NETWORKS": "1", "FEDERATION_RETRY_BASE_MS": "100", "FEDERATION_POLL_MS": "100"}
WITHIN = 2.0


class Peer:
    """deploy/fediverse/peer.py on a free port, stopped on exit."""

    def __init__(self, log_path, actors=1):
        self.port = free_port()
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen([PYTHON, PEER, str(self.port), str(actors)], stdout=self.log, stderr=self.log)
        self.control = Client(self.port)
        self.base = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        up, _ = eventually(20, lambda: self.process.poll() is None and self._answers())
        if not up:
            raise RuntimeError(f"the fediverse peer did not start; see {self.log.name}")
        return self

    def _answers(self):
        try:
            return self.control.call("GET", "/control/received").status == 200
        except OSError:
            return False

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()

    def received(self, type_=None, object_id=None):
        entries = self.control.call("GET", "/control/received").body["received"]
        return [e for e in entries if (type_ is None or (e["activity"] or {}).get("type") == type_)
                and (object_id is None or object_of(e) == object_id)]

    def arrival(self, type_, object_id, after, seconds=WITHIN + 3):
        """The first entry of `type_` about `object_id`, and seconds from `after` to it."""
        found, _ = eventually(seconds, lambda: self.received(type_, object_id))
        return (found[0], found[0]["at"] - after) if found else (None, None)


def object_of(entry):
    value = (entry["activity"] or {}).get("object")
    return value.get("id") if isinstance(value, dict) else value


def journey(client, gateway_port, check, log_dir):
    host = f"127.0.0.1:{gateway_port}"
    base = f"http://{host}"
    session = client.register("Fedi Author")
    token, user_id = session["accessToken"], session["user"]["userId"]
    actor = f"{base}/ap/users/{user_id}"
    # The user event reaches the federation service a moment after the registration.
    found, _ = eventually(30, lambda: client.call("GET", f"/.well-known/webfinger?resource=acct:{user_id}@{host}").status == 200)
    check("WebFinger finds a new author through the gateway", found)
    webfinger = client.call("GET", f"/.well-known/webfinger?resource=acct:{user_id}@{host}")
    handle = (webfinger.body or {}).get("subject", "acct:?@").split(":", 1)[1].split("@")[0]
    check("the author's handle is made from the name", handle.startswith("fedi_author"), webfinger)

    with Peer(os.path.join(log_dir, "fediverse-peer.log")) as peer:
        followed_at = time.time()
        answer = peer.control.call("POST", "/control/follow", body={"acct": f"{handle}@{host}"})
        check("bovine resolves the author by WebFinger and its signed Follow is accepted (202)",
              answer.status == 200 and answer.body.get("status") == 202 and answer.body.get("target") == actor, answer)
        follow_id = (answer.body or {}).get("follow", {}).get("id")
        accept, took = peer.arrival("Accept", follow_id, followed_at)
        check(f"a signed Accept arrives within {WITHIN} s ({took if took is None else round(took, 2)} s)", accept and took <= WITHIN, accept)
        if accept:
            check("the Accept verifies with bovine and with httpsig, signed by the author",
                  accept["bovine"] and accept["httpsig"] and accept["controller"] == actor, accept)
        followers = client.call("GET", f"/ap/users/{user_id}/followers").body or {}
        check("the author has one follower", followers.get("totalItems") == 1, followers)

        # Publish, edit, delete through the gateway: Create, Update, Delete, each within 2 s.
        draft = client.call("POST", "/api/posts", token, {"title": "Not for the fediverse", "content": "draft", "status": "draft"}).body
        started = time.time()
        post = client.call("POST", "/api/posts", token, {"title": "Hello, fediverse", "content": "First *federated* post.", "status": "published"}).body
        article = f"{base}/ap/posts/{post['_id']}"
        create, took = peer.arrival("Create", article, started)
        check(f"Create(Article) arrives within {WITHIN} s ({took if took is None else round(took, 2)} s)", create and took <= WITHIN, create)
        if create:
            obj = create["activity"]["object"]
            check("Create is signed (bovine, httpsig) with a valid digest", create["bovine"] and create["httpsig"], create)
            check("the Article carries the post", obj.get("type") == "Article" and obj.get("name") == "Hello, fediverse"
                  and "<em>federated</em>" in obj.get("content", "") and obj.get("attributedTo") == actor
                  and obj.get("to") == ["https://www.w3.org/ns/activitystreams#Public"] and obj.get("cc") == [f"{actor}/followers"], obj)
        fetched = client.call("GET", f"/ap/posts/{post['_id']}")
        check("the Article is served through the gateway as activity+json", fetched.status == 200
              and fetched.headers.get("content-type", "").startswith("application/activity+json"), fetched)
        started = time.time()
        client.call("PUT", f"/api/posts/{post['_id']}", token, {"title": "Hello again, fediverse"})
        update, took = peer.arrival("Update", article, started)
        check(f"an edit arrives as Update within {WITHIN} s ({took if took is None else round(took, 2)} s)",
              update and took <= WITHIN and update["bovine"] and update["httpsig"]
              and update["activity"]["object"].get("name") == "Hello again, fediverse", update)
        started = time.time()
        client.call("DELETE", f"/api/posts/{post['_id']}", token)
        delete, took = peer.arrival("Delete", article, started)
        check(f"a delete arrives as Delete(Tombstone) within {WITHIN} s ({took if took is None else round(took, 2)} s)",
              delete and took <= WITHIN and delete["bovine"] and delete["httpsig"], delete)
        gone, _ = eventually(2, lambda: client.call("GET", f"/ap/posts/{post['_id']}").status == 410)
        check("the deleted post answers 410 with a Tombstone", gone)
        check("the draft never left", not peer.received(object_id=f"{base}/ap/posts/{draft['_id']}")
              and client.call("GET", f"/ap/posts/{draft['_id']}").status == 404)

        # Refused: each 401 names its reason; nothing changes.
        inbox = f"{base}/ap/users/{user_id}/inbox"
        probe = {"@context": "https://www.w3.org/ns/activitystreams", "id": f"{peer.base}/follows/probe", "type": "Follow",
                 "actor": f"{peer.base}/actor", "object": actor}
        for mode, reason in [("unsigned", "no Signature"), ("tampered", "Digest"), ("old-date", "Date"), ("other-actor", "owner")]:
            sent = peer.control.call("POST", "/control/send", body={"inbox": inbox, "activity": {**probe, "id": f"{probe['id']}-{mode}"}, "mode": mode}).body
            detail = json.loads(sent["body"]).get("detail", "") if sent["body"].startswith("{") else sent["body"]
            check(f"{mode} POST: 401 naming the reason", sent["status"] == 401 and reason in detail, sent)
        answer = peer.control.call("POST", "/control/follow", body={"acct": f"{handle}@{host}"})
        check("a second Follow is accepted", answer.body.get("status") == 202, answer)
        eventually(1, lambda: False)
        check("a second Follow leaves one follower", (client.call("GET", f"/ap/users/{user_id}/followers").body or {}).get("totalItems") == 1)

        # A peer answering 500 is tried again; one answering 410 is not (and loses its followers).
        peer.control.call("POST", "/control/answer", body={"statuses": [500]})
        started = time.time()
        post = client.call("POST", "/api/posts", token, {"title": "Retried", "content": "again", "status": "published"}).body
        tries, _ = eventually(10, lambda: len(peer.received("Create", f"{base}/ap/posts/{post['_id']}")) >= 2 or None)
        entries = peer.received("Create", f"{base}/ap/posts/{post['_id']}")
        check("a delivery answered 500 is retried, the same activity, then accepted",
              len(entries) >= 2 and entries[0]["answered"] == 500 and entries[-1]["answered"] == 202
              and len({e["activity"]["id"] for e in entries}) == 1, [(e["answered"], round(e["at"] - started, 2)) for e in entries])
        peer.control.call("POST", "/control/answer", body={"statuses": [410]})
        post = client.call("POST", "/api/posts", token, {"title": "Gone", "content": "gone", "status": "published"}).body
        eventually(5, lambda: peer.received("Create", f"{base}/ap/posts/{post['_id']}"))
        eventually(1.5, lambda: False)
        check("a delivery answered 410 is not retried", len(peer.received("Create", f"{base}/ap/posts/{post['_id']}")) == 1)
        dropped, _ = eventually(3, lambda: (client.call("GET", f"/ap/users/{user_id}/followers").body or {}).get("totalItems") == 0)
        check("the inbox that answered 410 loses its followers", dropped)


def main():
    """The journey alone, on a suite of its own (deploy/system_test.py runs it on its suite)."""
    from postly_suite.checks import Checks
    from postly_suite.suite import running_suite

    check = Checks()
    with running_suite("federation", check, settings=ENVIRONMENT) as suite:
        try:
            journey(Client(suite.port("gateway")), suite.port("gateway"), check, os.path.join(suite.run_dir, "logs"))
        except Exception as error:  # a crash of the journey is one failure, with where it happened
            import traceback
            traceback.print_exc()
            check("the journey ran to its end", False, repr(error))
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
