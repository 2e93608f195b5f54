"""A remote ActivityPub instance on loopback, for deploy/federation_test.py and the federation
bench: PyPI bovine's test server (a Quart app with WebFinger, an actor with an RSA key, an
inbox that checks HTTP signatures with `bovine.crypto.build_validate_http_signature`, and a
`BovineActor` that signs what it sends), with a control API for the test. Runs in the
virtual environment .deps/federation (deploy/install.sh), apart from the suite's Python.

    .deps/federation/bin/python deploy/fediverse/peer.py PORT [ACTORS]

ACTORS (default 1) actors share the instance's inbox, as on a real server: /actor (the first,
bovine's) and /users/N. The control API (plain JSON):
  GET  /control/received          what the inbox got: activity, headers, whether bovine and,
                                  independently, PyPI httpsig verified it, and what we answered
  POST /control/answer            {"statuses": [500, ...]}: the next answers of the inbox
  POST /control/follow            {"acct": "handle@host", "actor": N}: WebFinger, then a signed Follow
  POST /control/send              {"inbox", "activity", "mode"}: mode signed, unsigned, tampered,
                                  old-date (13 hours), other-actor (signed by us, actor someone else);
                                  answers {"status", "body"}
"""
import asyncio
import base64
import hashlib
import json
import logging
import sys
import time
import uuid
from email.utils import formatdate

import aiohttp
import httpsig
from quart import Quart, request

from bovine import BovineActor
from bovine.activitystreams import Actor
from bovine.clients import lookup_uri_with_webfinger
from bovine.crypto import build_validate_http_signature, generate_rsa_public_private_key
from bovine.crypto.http_signature import build_signature
from bovine.crypto.types import CryptographicIdentifier, CryptographicSecret
from bovine.utils import webfinger_response_json

PORT = int(sys.argv[1])
ACTORS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
BASE = f"http://127.0.0.1:{PORT}"
HOSTNAME = f"127.0.0.1:{PORT}"
PUBLIC_KEY, PRIVATE_KEY = generate_rsa_public_private_key()

app = Quart(__name__)
received = []
statuses = []
keys = {}


def actor_id(n):
    return f"{BASE}/actor" if n == 0 else f"{BASE}/users/{n}"


def actor_document(n):
    document = Actor(id=actor_id(n), preferred_username="buttercup" if n == 0 else f"cow{n}", name="Buttercup",
                     inbox=f"{BASE}/inbox", outbox=actor_id(n), public_key=PUBLIC_KEY, public_key_name="main-key").build()
    document["endpoints"] = {"sharedInbox": f"{BASE}/inbox"}
    return document


def bovine_actor(n=0):
    return BovineActor(actor_id=actor_id(n), public_key_url=f"{actor_id(n)}#main-key", secret=PRIVATE_KEY)


actors = {}


async def signer(n=0):
    if n not in actors:
        actors[n] = bovine_actor(n)
        await actors[n].init()
    return actors[n]


async def fetch_public_key(key_id):
    if key_id not in keys:
        result = await (await signer()).get(key_id)
        keys[key_id] = result
    return CryptographicIdentifier.from_public_key(keys[key_id]["publicKey"])


bovine_verify = build_validate_http_signature(fetch_public_key)


def httpsig_verifies(headers, body, key_id):
    """PyPI httpsig's draft-cavage verifier, with the key bovine fetched, and the digest."""
    document = keys.get(key_id.split("#")[0]) or keys.get(key_id)
    if document is None:
        return False
    digest = "SHA-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode()
    if headers.get("digest", "").split(",")[0].strip().lower() != digest.lower():
        return False
    verifier = httpsig.HeaderVerifier(headers=headers, secret=document["publicKey"]["publicKeyPem"],
                                      required_headers=["(request-target)", "host", "date", "digest"],
                                      method="POST", path="/inbox", sign_header="signature")
    return verifier.verify()


@app.get("/.well-known/webfinger")
async def webfinger():
    return webfinger_response_json(f"acct:buttercup@{HOSTNAME}", actor_id(0))


@app.get("/actor")
async def first_actor():
    return actor_document(0), 200, {"content-type": "application/activity+json"}


@app.get("/users/<int:n>")
async def other_actor(n):
    return actor_document(n), 200, {"content-type": "application/activity+json"}


@app.post("/inbox")
async def inbox():
    body = await request.get_data()
    headers = {k.lower(): v for k, v in request.headers.items()}
    entry = {"at": time.time(), "headers": headers, "activity": json.loads(body or b"null")}
    try:
        controller = await bovine_verify(request)
    except Exception as error:  # a signature bovine cannot even parse
        controller, entry["error"] = None, repr(error)
    key_id = ""
    if "signature" in headers:
        key_id = next((part.split("=", 1)[1].strip('"') for part in headers["signature"].split(",") if part.strip().startswith("keyId=")), "")
    entry["bovine"] = bool(controller)
    entry["controller"] = controller
    try:
        entry["httpsig"] = bool(controller) and httpsig_verifies(headers, body, key_id)
    except Exception as error:
        entry["httpsig"], entry["error"] = False, repr(error)
    status = statuses.pop(0) if statuses else (202 if controller else 401)
    entry["answered"] = status
    received.append(entry)
    return "", status


@app.get("/control/received")
async def control_received():
    return {"received": received}


@app.post("/control/answer")
async def control_answer():
    statuses.extend((await request.get_json())["statuses"])
    return {"queued": len(statuses)}


@app.post("/control/follow")
async def control_follow():
    data = await request.get_json()
    n = data.get("actor", 0)
    actor = await signer(n)
    async with aiohttp.ClientSession() as session:
        target, _ = await lookup_uri_with_webfinger(session, f"acct:{data['acct']}", domain=f"http://{data['acct'].split('@', 1)[1]}")
    target_document = await actor.get(target)
    follow = {"@context": "https://www.w3.org/ns/activitystreams", "id": f"{actor_id(n)}/follows/{uuid.uuid4()}",
              "type": "Follow", "actor": actor_id(n), "object": target}
    response = await actor.client.post(target_document["inbox"], json.dumps(follow))
    return {"status": response.status, "follow": follow, "target": target, "inbox": target_document["inbox"]}


@app.post("/control/send")
async def control_send():
    data = await request.get_json()
    inbox, activity, mode = data["inbox"], data["activity"], data.get("mode", "signed")
    if mode == "other-actor":
        activity = {**activity, "actor": "https://mastodon.example/users/carol"}
    body = json.dumps(activity)
    host, target = inbox.split("://", 1)[1].split("/", 1)
    date = formatdate(time.time() - (13 * 3600 if mode == "old-date" else 0), usegmt=True)
    digest = "SHA-256=" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
    helper = build_signature(host, "post", "/" + target).with_field("date", date).with_field("digest", digest)
    headers = {"content-type": "application/activity+json", **helper.headers}
    if mode != "unsigned":
        headers["signature"] = helper.sign_for_http_draft(CryptographicSecret.from_pem(f"{actor_id(0)}#main-key", PRIVATE_KEY))
    if mode == "tampered":
        body = body.replace("}", ', "tampered": true}', 1)
    async with aiohttp.ClientSession() as session:
        async with session.post(inbox, data=body.encode(), headers=headers) as response:
            return {"status": response.status, "body": await response.text()}


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    app.run(host="127.0.0.1", port=PORT, use_reloader=False)
