#!/usr/bin/env python3
"""The whole suite as the iOS app uses it: only through the gateway of a suite that
deploy/up.sh started. Starts a fake Pexels on loopback first (so the images service has an
upstream), brings the suite up with it, walks the app's paths across all six services, and
stops everything again. Ends with `N passed, M failed`.

    deploy/system_test.py            (deploy/test.sh runs it; POSTLY_BUILD_CONFIGURATION=debug)

POSTLY_SYSTEM_INSTANCES=2 runs every service twice behind the gateway; POSTLY_SYSTEM_MANIFESTS=ha
(deploy/test.sh's) runs them as the Kubernetes overlay deploy/k8s/overlays/ha configures them:
each Deployment's binary as many times as its replicas, with exactly its pods' environment
(postly_suite.manifests). Either way, with every service twice or more: the same journeys,
then one instance of each killed with SIGKILL under load (no acknowledged write lost, no 5xx
but for requests in flight at the kill).

Ports are free ones unless POSTLY_*_PORT are set, so a suite already running on the default
ports is left alone; the suite's data lives in a temporary folder.
"""
import calendar
import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
import threading
import traceback
import urllib.parse
import urllib.request
import uuid

import federation_test
import import_test
from postly_suite import ROOT, lib, measure
from postly_suite.checks import APP_POST_KEYS, Checks
from postly_suite.client import Client, ready_status
from postly_suite.fake_collector import FakeCollector
from postly_suite.suite import SERVICES, eventually, running_suite, settle

# The contract's "within 1 second" promises (comments in posts, search, revocation, streams).
WITHIN = float(os.environ.get("POSTLY_SYSTEM_WITHIN_SECONDS", "1.0"))
INSTANCES = int(os.environ.get("POSTLY_SYSTEM_INSTANCES", "1"))
MANIFESTS = os.environ.get("POSTLY_SYSTEM_MANIFESTS")

check = Checks()
# What must never reach a log line: the Pexels key and every token handed out.
secrets = []


def walk(client, suite):
    pexels = suite.pexels
    suffix = "".join(random.choices(string.ascii_lowercase, k=8))
    # A word nobody else writes, so search finds exactly this run's posts.
    topic = "quokka" + suffix

    # Accounts.
    answer = client.call("POST", "/api/auth/register", body={"name": "Ada", "email": f"Ada.{suffix}@Example.com ", "password": "correct horse"})
    check("register answers 201 with a session", answer.status == 201 and "accessToken" in (answer.body or {}), answer)
    answer = client.call("POST", "/api/auth/register", body={"name": "Grace", "email": f"grace.{suffix}@example.com", "password": "correct horse"})
    grace, grace_id = answer.body["accessToken"], answer.body["user"]["userId"]
    secrets.extend([grace, answer.body["refreshToken"]])
    answer = client.call("POST", "/api/auth/login/email", body={"email": f"ada.{suffix}@example.com", "password": "correct horse"})
    check("login with the email in another case answers 200", answer.status == 200, answer)
    ada = answer.body["accessToken"]
    secrets.extend([ada, answer.body["refreshToken"]])
    answer = client.call("GET", "/api/auth/check", ada)
    check("check answers the user, without a password", answer.status == 200 and answer.body.get("email") == f"ada.{suffix}@example.com"
          and "password" not in json.dumps(answer.body), answer)

    # A service is ready when its database and broker answer; its consumers join their groups
    # a few seconds later (a tansu group join takes about half the session timeout).
    warm, ready, took = settle(client, grace, ada, topic, 60)
    check(f"every consumer has joined and applied a first event ({took:.1f} s after ready)", ready)
    # One warm-up event travels in one partition: the others may still be handed over (tansu
    # holds a static member's join 6 s), and an event there would wait for it.
    stable, took = eventually(60, lambda: not unsettled_groups(suite))
    check(f"every consumer group holds its partitions ({took:.1f} s later)", stable, unsettled_groups(suite))
    suite_idle(suite)
    client.call("DELETE", f"/api/posts/{warm}", grace)
    client.call("POST", "/api/notifications/read", grace, {"all": True})

    # Ada's stream is open before anyone acts on her post.
    stream = client.stream("/api/notifications/stream", ada)
    check("the notifications stream opens as text/event-stream", stream.status == 200 and stream.content_type.startswith("text/event-stream"),
          f"{stream.status} {stream.content_type}")

    # Posts.
    cover = "https://images.example.com/cover.jpg"
    answer = client.call("POST", "/api/posts", ada, {"title": f"Crème brûlée and the {topic}", "content": f"Custard, sugar and a torch. The {topic} watches.\n\nOutro **bold**.",
                                                     "status": "published", "coverImage": cover})
    check("create a published post answers 201 with Location", answer.status == 201 and answer.headers.get("location", "").endswith(answer.body.get("_id", "?")), answer)
    post = answer.body
    post_id = post["_id"]
    check("the post carries every key the app decodes", all(k in post for k in APP_POST_KEYS), sorted(post))
    check("timestamps carry milliseconds", all(len(post[k]) == 24 and post[k][19] == "." and post[k].endswith("Z") for k in ["createdAt", "updatedAt"]), post["createdAt"])
    check("the slug folds diacritics", post["slug"].startswith("creme-brulee"), post["slug"])
    check("the cover image is kept", post["coverImage"] == cover, post["coverImage"])
    check("Markdown is rendered", "<strong>bold</strong>" in post.get("contentHtml", ""), post.get("contentHtml"))
    answer = client.call("POST", "/api/posts", ada, {"title": f"Draft about the {topic}", "content": "not yet", "status": "draft"})
    check("create a draft without a cover answers 201", answer.status == 201 and answer.body["coverImage"] is None and answer.body["status"] == "draft", answer)
    draft_id = answer.body["_id"]

    answer = client.call("GET", "/api/posts?page=1&limit=10")
    ids = [p["_id"] for p in (answer.body or {}).get("posts", [])]
    check("the feed lists the published post, newest first", answer.status == 200 and post_id in ids and draft_id not in ids, answer)
    check("the feed's pagination is complete", set(answer.body.get("pagination", {})) >= {"total", "page", "limit", "totalPages"}, answer.body.get("pagination"))
    check("listed posts carry no contentHtml without formats=html", all("contentHtml" not in p for p in answer.body.get("posts", [])))
    answer = client.call("GET", "/api/posts?page=1&limit=10&formats=html")
    check("listed posts carry contentHtml with formats=html", answer.status == 200 and all("contentHtml" in p for p in answer.body.get("posts", [])), answer)
    answer = client.call("GET", f"/api/posts/{draft_id}", grace)
    check("someone else's draft is 404", answer.status == 404, answer)

    first = client.call("GET", f"/api/posts/{post_id}")
    client.call("GET", f"/api/posts/{post_id}")
    grown, took = eventually(6, lambda: client.call("GET", f"/api/posts/{post_id}").body["views"] >= first.body["views"] + 2)
    check(f"views grow as the post is read ({took:.2f} s)", grown)

    answer = client.call("PUT", f"/api/posts/{post_id}", ada, {"title": f"Crème brûlée, the {topic} returns", "coverImage": None},
                         headers={"If-Match": f"\"{post['version']}\""})
    check("edit with If-Match answers 200, cover removed, version up", answer.status == 200 and answer.body["coverImage"] is None
          and answer.body["version"] == post["version"] + 1, answer)
    check("the old slug still resolves", client.call("GET", f"/api/posts/slug/{post['slug']}").status == 200)
    answer = client.call("PUT", f"/api/posts/{post_id}", ada, {"title": "stale"}, headers={"If-Match": f"\"{post['version']}\""})
    check("a stale If-Match answers 412", answer.status == 412, answer)
    answer = client.call("PUT", f"/api/posts/{post_id}", grace, {"title": "not mine"})
    check("someone else's edit answers 403", answer.status == 403, answer)

    # Likes.
    answer = client.call("POST", f"/api/posts/{post_id}/like", grace)
    check("like answers 200 with a message", answer.status == 200 and "message" in answer.body, answer)
    liked_at = time.monotonic()
    check("like status is true", client.call("GET", f"/api/posts/{post_id}/like", grace).body == {"liked": True})
    check("the post counts the like", client.call("GET", f"/api/posts/{post_id}").body["likes"] == 1)
    answer = client.call("DELETE", f"/api/posts/{post_id}/like", grace)
    check("unlike answers 200; like status is false", answer.status == 200 and client.call("GET", f"/api/posts/{post_id}/like", grace).body == {"liked": False})

    # Comments.
    answer = client.call("POST", f"/api/posts/{post_id}/comments", grace, {"content": "Torch on low, and patience."})
    check("comment answers 201", answer.status == 201, answer)
    commented_at = time.monotonic()
    comment_id = answer.body["_id"]
    shown, took = eventually(WITHIN, lambda: client.call("GET", f"/api/posts/{post_id}").body["commentsCount"] == 1)
    check(f"the comment shows in the post within {WITHIN} s ({took:.2f} s)", shown)
    # Ada sees the comment's notification before she deletes the comment, as in the app: a
    # comment deleted before its notification was pushed takes the notification with it, and
    # both events may then reach the notifications service together.
    eventually(WITHIN + 1, lambda: any(n.get("commentId") == comment_id for n in stream.notifications()))
    answer = client.call("DELETE", f"/api/posts/{post_id}/comments/{comment_id}", ada)
    check("the post's author deletes the comment", answer.status == 200, answer)
    comment_deleted_at = time.monotonic()
    gone, took = eventually(WITHIN, lambda: client.call("GET", f"/api/posts/{post_id}").body["commentsCount"] == 0)
    check(f"the deleted comment leaves the post within {WITHIN} s ({took:.2f} s)", gone)

    # Search.
    def found():
        answer = client.call("GET", "/api/posts/search?q=" + urllib.parse.quote(f"{topic} returns"))
        return answer if answer.status == 200 and any(p["_id"] == post_id and "returns" in p["title"] for p in answer.body) else None
    answer, took = eventually(WITHIN, found)
    check(f"search finds the edited post within {WITHIN} s ({took:.2f} s)", answer, answer or search_trail(suite, post_id))
    if answer:
        hit = next(p for p in answer.body if p["_id"] == post_id)
        check("search results carry highlights and the app's keys", "<mark>" in hit.get("highlights", {}).get("title", "") and all(k in hit for k in APP_POST_KEYS), hit)
        check("search never finds the draft", all(p["_id"] != draft_id for p in answer.body))
    answer = client.call("GET", "/api/posts/search?q=" + urllib.parse.quote("a & | ! ( b"))
    check("search takes any text", answer.status == 200, answer)

    # A scheduled post: nowhere before its time; then published by the scheduler and found by
    # search within the second.
    publish_at = time.time() + 3
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(publish_at)) + f".{int(publish_at * 1000) % 1000:03d}Z"
    answer = client.call("POST", "/api/posts", ada, {"title": f"The {topic} at dawn", "content": "Later.", "status": "scheduled", "publishAt": stamp})
    check("a post is scheduled", answer.status == 201 and answer.body.get("status") == "scheduled", answer)
    scheduled_id = answer.body.get("_id") if isinstance(answer.body, dict) else None
    dawn = lambda: client.call("GET", "/api/posts/search?q=" + urllib.parse.quote(f"{topic} dawn")).body or []
    check("search does not find a scheduled post before its time", all(p["_id"] != scheduled_id for p in dawn()))
    time.sleep(max(0.0, publish_at - time.time()))
    found, took = eventually(WITHIN + 1, lambda: any(p["_id"] == scheduled_id for p in dawn()))
    check(f"search finds it within {WITHIN + 1:.0f} s of its time ({took:.2f} s)", found, found or search_trail(suite, scheduled_id))
    listed = client.call("GET", f"/api/posts/{scheduled_id}").body or {}
    check("it is published at its time", listed.get("status") == "published" and listed.get("publishedAt", "")[:19] == stamp[:19], listed)

    # Notifications: the like and the comment reached Ada's open stream.
    def streamed():
        types = [n["type"] for n in stream.notifications()]
        return "post.liked" in types and "comment.created" in types
    arrived, _ = eventually(WITHIN + 1, streamed)
    check("the stream received the like and the comment", arrived, arrived or notifications_trail(suite, post_id, stream))
    if arrived:
        like_event = next(e for e in stream.events if '"post.liked"' in e["data"])
        comment_event = next(e for e in stream.events if '"comment.created"' in e["data"])
        check(f"each arrived within {WITHIN} s of its answer (like {like_event['received'] - liked_at:.2f} s, "
              f"comment {comment_event['received'] - commented_at:.2f} s)",
              like_event["received"] - liked_at <= WITHIN and comment_event["received"] - commented_at <= WITHIN)
        actor = json.loads(like_event["data"])["actor"]
        check("a notification's actor is an Author without an email", actor.get("userId") == grace_id and "email" not in actor, actor)
    stream.close()

    # A browser's EventSource cannot send Authorization: it trades a ticket for the stream.
    answer = client.call("POST", "/api/notifications/stream-ticket", ada)
    ticket = (answer.body or {}).get("ticket") if isinstance(answer.body, dict) else None
    check("a stream ticket is handed out", answer.status == 200 and ticket, answer)
    if ticket:
        secrets.append(ticket)
        browser = client.stream("/api/notifications/stream?ticket=" + urllib.parse.quote(ticket))
        check("the stream opens with the ticket instead of the header", browser.status == 200, browser.status)
        browser.close()
        again = client.stream("/api/notifications/stream?ticket=" + urllib.parse.quote(ticket))
        check("a ticket opens one stream only", again.status == 401, again.status)
        again.close()

    # The comment's deletion reaches the notifications service by an event, within the second.
    def listed_like_only():
        answer = client.call("GET", "/api/notifications", ada)
        return answer if answer.status == 200 and [n["type"] for n in answer.body["notifications"]] == ["post.liked"] else None
    answer, _ = eventually(max(0.0, comment_deleted_at + WITHIN - time.monotonic()), listed_like_only)
    check(f"Ada's list shows the like, the comment's removed with it within {WITHIN} s", answer and answer.body["unreadCount"] == 1,
          answer or notifications_trail(suite, post_id, stream))
    answer = client.call("POST", "/api/notifications/read", ada, {"all": True})
    check("marking all read answers 200", answer.status == 200 and client.call("GET", "/api/notifications", ada).body.get("unreadCount") == 0, answer)
    answer = client.call("GET", "/api/notifications", grace)
    check("Grace has no notifications of her own actions", answer.body.get("notifications") == [], answer)

    # Cover images, through our images service and the fake Pexels.
    answer = client.call("GET", "/api/images/search?" + urllib.parse.urlencode({"query": "crème brûlée", "per_page": 6}), ada)
    check("image search answers Pexels' shape", answer.status == 200 and len(answer.body.get("photos", [])) == 6
          and set(answer.body["photos"][0]["src"]) == {"original", "large2x", "large", "medium", "small", "portrait", "landscape", "tiny"}, answer)
    asked = [c for c in pexels.calls if c["path"] == "/v1/search"]
    check("the query reached Pexels decoded intact, with the key as the bare Authorization",
          asked and asked[-1]["query"].get("query") == "crème brûlée" and asked[-1]["authorization"] == pexels.key, asked[-1:])
    check("the key appears nowhere in the answer", pexels.key not in json.dumps(answer.body) + json.dumps(answer.headers))
    before = len(pexels.calls)
    # Each instance keeps a cache of its own (README: images): the others ask once each.
    repeated = [client.call("GET", "/api/images/search?" + urllib.parse.urlencode({"query": "  Crème   BRÛLÉE ", "per_page": 6}), grace)
                for _ in range(suite.instances("images"))]
    check("the same query again is served from the cache", all(a.status == 200 for a in repeated)
          and len(pexels.calls) - before <= suite.instances("images") - 1, len(pexels.calls) - before)
    check("image search needs a token", client.call("GET", "/api/images/curated").status == 401)

    # Logout: the token stops working on every service.
    answer = client.call("POST", "/api/auth/logout", ada)
    check("logout answers 200", answer.status == 200, answer)
    probes = {
        "auth": lambda: client.call("GET", "/api/auth/check", ada),
        "posts": lambda: client.call("GET", f"/api/posts/{post_id}/like", ada),
        "comments": lambda: client.call("POST", f"/api/posts/{post_id}/comments", ada, {"content": "after logout"}),
        "images": lambda: client.call("GET", "/api/images/curated", ada),
        "notifications": lambda: client.call("GET", "/api/notifications", ada),
    }
    for service, probe in probes.items():
        refused, took = eventually(WITHIN, lambda: probe().status == 401)
        check(f"the logged-out token is refused by {service} within {WITHIN} s ({took:.2f} s)", refused)

    logged_out = ada

    # Deleting the post removes it everywhere.
    ada = client.call("POST", "/api/auth/login/email", body={"email": f"ada.{suffix}@example.com", "password": "correct horse"}).body["accessToken"]
    answer = client.call("DELETE", f"/api/posts/{post_id}", ada)
    check("the author deletes the post", answer.status == 200 and "message" in answer.body, answer)
    check("the deleted post leaves the feed", post_id not in [p["_id"] for p in client.call("GET", "/api/posts?limit=100").body["posts"]])
    def searched_without_it():
        answer = client.call("GET", "/api/posts/search?q=" + topic)
        return answer.status == 200 and all(p["_id"] != post_id for p in answer.body)
    left, took = eventually(WITHIN, searched_without_it)
    check(f"the deleted post leaves search within {WITHIN} s ({took:.2f} s)", left)
    left, took = eventually(WITHIN, lambda: client.call("GET", f"/api/posts/{post_id}/comments").status == 404)
    check(f"the comments service forgets the deleted post within {WITHIN} s ({took:.2f} s)", left)
    check("an unknown route is a 404 problem document", client.call("GET", "/api/nothing").headers.get("content-type", "").startswith("application/problem+json"))
    return logged_out


def revocations_survive_restarts(client, suite, logged_out):
    """The broker started again empty (tansu keeps nothing), then every service restarted: the
    token logged out before is refused by each from its first answer on."""
    broker = os.path.join(suite.run_dir, "broker")
    lib.broker_stop(broker)
    lib.broker_start(broker, suite.port("broker"))
    for name in SERVICES:
        for instance in range(1, suite.instances(name) + 1):
            service = suite.service(name, instance)
            service.stop()
            service.start()
            ready, _ = eventually(60, lambda: ready_status(suite.port(name, instance)) == 200)
            check(f"{service.name} is ready again after its restart", ready)
    # Where a caller is needed (public reads take a refused token as no token; search has none).
    probes = {"auth": ("GET", "/api/auth/check"), "posts": ("GET", "/api/users/me/posts"), "comments": ("POST", "/api/posts/none/comments"),
              "images": ("GET", "/api/images/curated"), "notifications": ("GET", "/api/notifications")}
    for name, (method, path) in probes.items():
        answer = client.call(method, path, logged_out, {"content": "after the restarts"} if method == "POST" else None)
        check(f"after the restarts, {name} refuses the token logged out before", answer.status == 401, answer)
    answer = client.call("GET", "/api/posts", logged_out)
    check("a public read with the token logged out before answers as to anyone", answer.status == 200, answer)


# --- the feeds as readers and validators read them -------------------------------------------

FEED_TOOLS = os.path.join(ROOT, ".deps", "feed-tools", "bin", "python")
# What XML 1.0 cannot carry, which the feeds drop (C0 controls but tab, LF and CR; U+FFFE/FFFF).
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def feeds_read_by_readers(client, suite):
    """The site's and an author's RSS and Atom feeds, with a hostile post among them, read by
    feedparser (no parse error, the API's posts in its order with their ids, links, titles,
    times and authors), RSS held to the RSS 2.0 specification's required elements (lxml) and
    Atom to RFC 4287's RELAX NG schema (jing); no script gets through; conditional GETs."""
    session = client.register("Feed <Writer> & Co")
    token, user_id = session["accessToken"], session["user"]["userId"]
    secrets.extend([token, session["refreshToken"]])
    client.first_post(token, "A calm post", "Nothing to see.")
    hostile = {"title": "A & B <c> ]]> \b 🍮", "status": "published", "coverImage": "https://images.example.com/a.jpg?x=1&y='2'",
               "content": "Raw <script>alert('feed')</script> <b onclick=\"steal()\">bold</b>, ]]> and \b inside.\n\n"
                          "<iframe src=\"https://evil.example\"></iframe><img src=x onerror=\"steal()\">"}
    answer = client.call("POST", "/api/posts", token, hostile)
    check("a post with a hostile title and raw HTML is created", answer.status == 201, answer)
    hostile_id = answer.body["_id"]
    paths = {"site rss": "/api/feeds/posts.rss", "site atom": "/api/feeds/posts.atom",
             "author rss": f"/api/users/{user_id}/feed.rss", "author atom": f"/api/users/{user_id}/feed.atom"}
    # Each instance renders its own, refreshed within 10 s of another instance's write.
    instances = [Client(suite.port("posts", instance)) for instance in range(1, suite.instances("posts") + 1)]
    fresh, took = eventually(12, lambda: all(hostile_id in posts.call("GET", path).body for posts in instances for path in paths.values()))
    check(f"every instance's feeds show the new post ({took:.1f} s)", fresh)
    answers = {name: client.call("GET", path) for name, path in paths.items()}
    for name, answer in answers.items():
        kind = name.split()[1]
        check(f"the {name} feed answers 200 as {kind}", answer.status == 200
              and answer.headers.get("content-type") == f"application/{kind}+xml; charset=utf-8", f"{answer.status} {answer.headers}")
    documents = [{"name": name, "kind": name.split()[1], "body": answer.body} for name, answer in answers.items()]
    read = subprocess.run([FEED_TOOLS, os.path.join(ROOT, "deploy", "feeds_check.py")], input=json.dumps({"documents": documents}),
                          capture_output=True, text=True, timeout=120)
    check("feedparser, lxml and jing read the feeds", read.returncode == 0, read.stderr[-2000:])
    if read.returncode != 0:
        return
    results = json.loads(read.stdout)
    base = suite.environment.get("PUBLIC_BASE_URL") or f"http://127.0.0.1:{suite.port('gateway')}"
    site = client.call("GET", "/api/posts?page=1&limit=20").body["posts"]
    mine = client.call("GET", f"/api/users/{user_id}/posts?page=1&limit=20").body["posts"]
    for name, result in results.items():
        version = "rss20" if name.endswith("rss") else "atom10"
        check(f"feedparser reads the {name} feed without error as {version}", not result["bozo"] and result["version"] == version,
              result["problem"] or result["version"])
        posts = site if name.startswith("site") else mine
        expected = [{"id": posts_tag(post["_id"]), "title": NOT_XML.sub("", post["title"]), "author": post["author"]["name"],
                     "published": int(timestamp(post.get("publishedAt") or post["createdAt"]))} for post in posts]
        seen = [{key: entry[key] for key in ("id", "title", "author", "published")} for entry in result["entries"]]
        matched = len(seen) == len(expected) and all(s["id"].endswith(e["id"]) and {**s, "id": e["id"]} == e for s, e in zip(seen, expected))
        check(f"the {name} feed lists the API's {len(expected)} posts in order, ids, titles, times and authors equal", matched,
              [(s, e) for s, e in zip(seen, expected) if s != e][:2] or (len(seen), len(expected)))
        links = [entry["link"] for entry in result["entries"]]
        check(f"the {name} feed links each post by its slug", links == [f"{base}/posts/{post['slug']}" for post in posts], links[:2])
        if "missing" in result:
            check(f"the {name} feed has RSS 2.0's required elements", not result["missing"], result["missing"])
        if "invalid" in result:
            check(f"the {name} feed validates against RFC 4287's RELAX NG schema (jing)", not result["invalid"], result["invalid"][:5])
    scripts = [name for name, answer in answers.items() if re.search(r"<script|&lt;script|onerror|onclick", answer.body, re.I)]
    check("no feed carries a script or an event handler", not scripts, scripts)
    check("the characters XML forbids are dropped, the rest of the hostile title kept",
          all(NOT_XML.search(answer.body) is None and "A &amp; B &lt;c&gt; ]]&gt;  🍮" in answer.body for answer in answers.values()),
          [answer.body[:400] for answer in answers.values()][:1])

    # Conditional GETs and HEAD, through the gateway (either instance answers: both render alike).
    first = answers["site atom"]
    etag = first.headers.get("etag")
    # Last-Modified is sent once every write stamped in its second has committed: a second or two.
    modified, _ = eventually(10, lambda: client.call("GET", paths["site atom"]).headers.get("last-modified"))
    check("Last-Modified is sent once the feed's writes have settled", modified is not None)
    answer = client.call("GET", paths["site atom"], headers={"If-None-Match": etag})
    check("a matching If-None-Match answers 304 without a body", answer.status == 304 and not answer.body and answer.headers.get("etag") == etag, answer)
    answer = client.call("GET", paths["site atom"], headers={"If-Modified-Since": modified})
    check("If-Modified-Since equal to Last-Modified answers 304", answer.status == 304, answer)
    answer = client.call("HEAD", paths["site rss"])
    check("HEAD answers the headers without a body", answer.status == 200 and not answer.body and answer.headers.get("etag"), answer)


def posts_tag(post_id):
    """The specific part of a post's tag URI (its feed id): the host and date come from the
    configuration."""
    return f":posts/{post_id}"


def timestamp(text):
    """Seconds since the epoch of the API's `2026-01-01T00:00:00.000Z`, whole."""
    return calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))


# --- a client nobody here wrote: schemathesis against every service's own document -------------

SCHEMATHESIS = os.path.join(ROOT, ".deps", "schemathesis", "bin", "st")
# What each answer is held to: no 5xx, only documented statuses, the documented content type
# and body schema; a method a path does not take answers 405 with `Allow`.
CONFORMANCE_CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,unsupported_method"
# Operations left out, and why: an open stream never ends (schemathesis would wait for its
# body), and logging out would revoke the token every other case uses.
CONFORMANCE_EXCLUDED = {"notifications": ["/api/notifications/stream"], "auth": ["/api/auth/logout"]}
CONFORMANCE_CASES = int(os.environ.get("POSTLY_CONFORMANCE_CASES", "500"))


def conformance(client, suite):
    session = client.register("Fuzz")
    token, user_id = session["accessToken"], session["user"]["userId"]
    secrets.extend([token, session["refreshToken"]])
    folder = tempfile.mkdtemp(prefix="postly-conformance.")
    for service in SERVICES:
        base = f"http://127.0.0.1:{suite.port(service)}"
        excluded = CONFORMANCE_EXCLUDED.get(service, [])
        document = Client(suite.port(service)).call("GET", "/openapi.json").body
        # Enough examples per operation that takes input for the service's whole run to reach
        # CONFORMANCE_CASES (operations without input make few distinct cases).
        with_input = [operation for path, item in document["paths"].items() if path not in excluded
                      for method, operation in item.items() if method != "parameters"
                      and (operation.get("parameters") or item.get("parameters") or operation.get("requestBody"))]
        per_operation = -(-CONFORMANCE_CASES * 6 // 5 // max(1, len(with_input)))
        # Real ids (a post of the caller's own, made for this run), so cases get past the 404 to
        # the routes' own checks.
        parameters = {}
        if service == "posts":
            parameters = {"path.id": client.first_post(token, "Fuzzed", "a post to fuzz"), "path.userId": user_id}
        elif service == "comments":
            parameters = {"path.postId": client.first_post(token, "Fuzzed", "a post to fuzz")}
        configuration = os.path.join(folder, f"{service}.toml")
        with open(configuration, "w") as file:
            file.write("[parameters]\n" + "".join(f'"{name}" = "{value}"\n' for name, value in parameters.items()))
        command = [SCHEMATHESIS, "--config-file", configuration, "run", f"{base}/openapi.json", "--url", base,
                   "-H", f"Authorization: Bearer {token}", "--checks", CONFORMANCE_CHECKS, "--max-examples", str(per_operation),
                   "--seed", "1", "--request-timeout", "10", "--no-color",
                   # One worker: hypothesis's cache of lambda sources is not safe across threads
                   # (a KeyError, then a SystemError from ast.parse, ends the run).
                   "--workers", "1"]
        for path in excluded:
            command += ["--exclude-path", path]
        started = time.monotonic()
        # In the run's folder: schemathesis keeps its example database where it runs.
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=folder)
        found = re.search(r"(\d+) generated", result.stdout)
        cases = int(found.group(1)) if found else 0
        check(f"schemathesis on {service}: {cases} cases in {time.monotonic() - started:.0f} s, every answer as documented",
              result.returncode == 0 and cases >= CONFORMANCE_CASES, result.stdout[-6000:] + result.stderr[-1000:])
    shutil.rmtree(folder, ignore_errors=True)


def instance_killed_under_load(client, suite):
    """With every service twice behind the gateway: writers create posts (each with its
    Idempotency-Key) and readers read the feed and posts while the first instance of every
    service is killed with SIGKILL. Every acknowledged post is there afterwards, and no answer
    is a 5xx but for requests that were in flight at the kill."""
    token = client.register("Kill Drill")["accessToken"]
    secrets.append(token)
    client.first_post(token, "Before the drill", "warming up")
    answers, lock, stop = [], threading.Lock(), threading.Event()

    def record(method, path, body=None, headers=None):
        started = time.monotonic()
        try:
            answer = client.call(method, path, token, body, headers)
            status, result = answer.status, answer.body
        except OSError:
            status, result = 0, None
        with lock:
            answers.append((started, time.monotonic(), method, status, result))

    def writer():
        while not stop.is_set():
            record("POST", "/api/posts", {"title": "Drill", "content": "Written while an instance dies."},
                   {"Idempotency-Key": str(uuid.uuid4())})

    def reader():
        while not stop.is_set():
            record("GET", "/api/posts?limit=5")

    threads = [threading.Thread(target=writer) for _ in range(3)] + [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    # One service after another, each waited for until it is gone: a request is in flight at
    # the kill when it overlaps that whole window (one sent to posts while auth died was).
    killed_at = time.monotonic()
    for name in SERVICES:
        suite.service(name, 1).stop(9)
    killed_until = time.monotonic()
    time.sleep(5)
    stop.set()
    for thread in threads:
        thread.join()
    created = [result["_id"] for _, _, method, status, result in answers if method == "POST" and status == 201]
    missing = [post for post in created if client.call("GET", f"/api/posts/{post}").status != 200]
    check(f"SIGKILL of one instance of each under load: {len(created)} acknowledged posts, none lost", created and not missing,
          missing[:5])
    failures = [(round(start - killed_at, 3), round(end - killed_at, 3), method, status) for start, end, method, status, _ in answers
                if status >= 500 or status == 0]
    window = round(killed_until - killed_at, 3)
    beyond = [failure for failure in failures if not (failure[0] <= window and failure[1] >= 0)]
    check(f"no 5xx but for the requests in flight at the kills ({len(failures)} of {len(answers)} in flight during their {window} s)",
          not beyond, beyond[:10])


def suite_idle(suite, seconds=10):
    """With no traffic, the suite costs next to nothing: each service instance uses under 5 % of
    a core, so none spins or polls many times a second. These are debug builds, and federation
    polls its deliveries every 100 ms here (federation_test.ENVIRONMENT), 1 s by default; the
    release suite's figures are in the README. What the broker, PostgreSQL and nginx use is
    printed beside them: the broker's is its consumers' fetches, each held `fetch.wait.max.ms`."""
    def pid_in(path):
        with open(os.path.join(suite.run_dir, path)) as f:
            return int(f.readline())

    parts = {f"{name}-{instance}": [suite.service(name, instance).pid]
             for name in SERVICES for instance in range(1, suite.instances(name) + 1)}
    infrastructure = {"broker": [pid_in("broker/broker.pid")], "postgres": measure.with_children(pid_in("postgres/data/postmaster.pid")),
                      "nginx": measure.with_children(pid_in("nginx/nginx.master.pid"))}
    everything = {**parts, **infrastructure}
    before = {part: measure.cpu_ticks(pids) for part, pids in everything.items()}
    time.sleep(seconds)
    cores = {part: (measure.cpu_ticks(pids) - before[part]) / measure.TICKS / seconds for part, pids in everything.items()}
    busiest = max(parts, key=cores.get)
    print("  idle, cores: " + ", ".join(f"{part} {share:.3f}" for part, share in sorted(cores.items(), key=lambda item: -item[1]))
          + f"; {sum(cores.values()):.3f} in all", flush=True)
    check(f"idle, every service instance uses under 5 % of a core (the most: {busiest} {cores[busiest]:.3f})", cores[busiest] < 0.05, cores)


def unsettled_groups(suite):
    """The consumers that do not hold their partitions yet, as `log: group (why)`; none when
    every consumer of every instance does: in its log, its group's last rebalance is an
    assignment, and none happened in the last second. A group one instance of a service has
    joined, every instance of it must have: a member whose join tansu still holds has logged
    nothing, and its join later takes partitions from the others mid-walk."""
    logs = os.path.join(suite.run_dir, "logs")
    last, groups = {}, {}
    for name in os.listdir(logs):
        service = re.sub(r"(-\d+)?\.log$", "", name)
        with open(os.path.join(logs, name), errors="replace") as log:
            for line in log:
                if line.startswith("{") and "Kafka partitions " in line:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    # An instance's revocation listener has a group of its own (`{service}-sessions-{uuid}`).
                    group = re.sub(r"-sessions-.*", "-sessions", entry.get("kafka.group", ""))
                    last[(name, group)] = (entry["message"], entry["time"])
                    groups.setdefault(service, set()).add(group)
    if not last:
        return ["no consumer has logged a rebalance"]
    unsettled = []
    for name in os.listdir(logs):
        for group in groups.get(re.sub(r"(-\d+)?\.log$", "", name), ()):
            if (name, group) not in last:
                unsettled.append(f"{name}: {group} (not joined)")
    now = time.time()
    for (name, group), (message, at) in last.items():
        moment = calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + at[19:].rstrip("Z"))
        if message != "Kafka partitions assigned":
            unsettled.append(f"{name}: {group} ({message})")
        elif now - moment < 1:
            unsettled.append(f"{name}: {group} (assigned {now - moment:.1f} s ago)")
    return unsettled


def rebalances_and_warnings(suite, *services):
    """The named services' logs' rebalances and warnings, the newest last, for a failed check."""
    logs = os.path.join(suite.run_dir, "logs")
    trail = {}
    for name in sorted(os.listdir(logs)):
        if name.startswith(services):
            with open(os.path.join(logs, name), errors="replace") as log:
                lines = [line[:300] for line in log if "OTel" not in line and re.search(r"partitions (assigned|revoked)|rebalance|\"level\":\"(warning|error)\"| warning | error ", line)]
            trail[name] = lines[-15:]
    return trail


def notifications_trail(suite, post_id, stream):
    """Where a post's likes and comments are on their way to its author's notifications, for a
    failed check: what the stream received, the events in the posts and comments outboxes,
    the notifications stored, and the rebalances and warnings of those three services."""
    port = suite.port("postgres")
    outbox = "SELECT id, convert_from(payload, 'UTF8')::jsonb->>'type', created_at, sent_at FROM outbox WHERE key = :'id' ORDER BY id"
    trail = {
        "streamed": [event.get("data") for event in stream.events],
        "posts outbox": lib.psql(port, "postly_posts", outbox, id=post_id),
        "comments outbox": lib.psql(port, "postly_comments", outbox, id=post_id),
        "notifications": lib.psql(port, "postly_notifications", "SELECT position, type, removed, created_at FROM notifications WHERE post_id = :'id' ORDER BY position", id=post_id),
    }
    trail.update(rebalances_and_warnings(suite, "notifications", "posts", "comments"))
    return json.dumps(trail, indent=1, default=str)


def search_trail(suite, post_id):
    """Where a post's events are on their way into search, for a failed check: its outbox rows,
    search's row, sequences and change log, each search instance's lag, and the search and posts
    instances' rebalances and warnings."""
    port = suite.port("postgres")
    trail = {
        "outbox": lib.psql(port, "postly_posts", "SELECT id, convert_from(payload, 'UTF8')::jsonb->>'type', created_at, sent_at FROM outbox WHERE key = :'id' ORDER BY id", id=post_id),
        "document": lib.psql(port, "postly_search", "SELECT sequence, status, title FROM documents WHERE id = :'id'", id=post_id),
        "consumed": lib.psql(port, "postly_search", "SELECT consumer, sequence FROM consumed_sequences WHERE key = :'id'", id=post_id),
        "changes": lib.psql(port, "postly_search", "SELECT position, at FROM changes WHERE post_id = :'id' ORDER BY position", id=post_id),
        "newest change": lib.psql(port, "postly_search", "SELECT max(position), now() FROM changes"),
    }
    for instance in range(1, suite.instances("search") + 1):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{suite.port('search', instance)}/metrics", timeout=2) as metrics:
                trail[f"search {instance}"] = [line for line in metrics.read().decode().splitlines() if line.startswith("postly_search")]
        except (KeyError, OSError) as error:
            trail[f"search {instance}"] = repr(error)
    trail.update(rebalances_and_warnings(suite, "search", "posts"))
    return json.dumps(trail, indent=1, default=str)


DUE_AT_ONCE = 1000


def scheduler_killed_mid_run(client, suite):
    """Every posts instance's scheduler, DUE_AT_ONCE posts due at one instant, and the instance
    caught holding claimed posts in its transaction killed with SIGKILL: every post is published
    once, with exactly one post.updated saying so, and every event leaves the outbox; then the
    instance starts again. (The posts are written past the service, as bench/posts-scale.sh
    writes them: creating a thousand through the API would take longer.)"""
    session = client.register("Scheduler Drill")
    token, user_id = session["accessToken"], session["user"]["userId"]
    secrets.extend([token, session["refreshToken"]])
    client.first_post(token, "Before the schedule", "the posts service knows the author")
    sql = lambda statement: lib.psql(suite.port("postgres"), "postly_posts", statement)
    prefix = f"due-{uuid.uuid4().hex[:8]}-"
    sql(f"""
        INSERT INTO posts (id, title, content, content_html, excerpt, slug, status, author_id, author_name, read_time,
                           created_at, updated_at, publish_at)
        SELECT '{prefix}' || i, 'Due ' || i, 'Words ' || i, '<p>Words ' || i || '</p>', 'Words ' || i, '{prefix}' || i, 'scheduled',
               '{user_id}', 'Scheduler Drill', 1, now(), now(), date_trunc('second', now()) + interval '3 seconds'
        FROM generate_series(1, {DUE_AT_ONCE}) AS i;
        INSERT INTO slugs (slug, post_id) SELECT slug, id FROM posts WHERE id LIKE '{prefix}%';
        INSERT INTO post_totals (author_id, status, slot, posts)
            VALUES ('{user_id}', 'scheduled', 0, {DUE_AT_ONCE}), ('', 'scheduled', 0, {DUE_AT_ONCE})
            ON CONFLICT (author_id, status, slot) DO UPDATE SET posts = post_totals.posts + excluded.posts""")
    published = f"SELECT count(*) FROM posts WHERE id LIKE '{prefix}%' AND status = 'published'"
    # The kill falls while an instance holds claimed posts (their row locks, which pgrowlocks
    # reads), in the transaction that would publish them: whichever instance is caught first
    # (with three, one may publish nothing before the others are done).
    sql("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
    instances = {number: suite.service("posts", number) for number in range(1, suite.instances("posts") + 1)}

    def claiming():
        probe = f"""SELECT ({published}), (SELECT string_agg(a.client_port || ' ' || r.count, ',')
                                           FROM (SELECT unnest(pids) AS pid, count(*) FROM pgrowlocks('posts') GROUP BY 1) r
                                           JOIN pg_stat_activity a ON a.pid = r.pid)"""
        done, locks = sql(probe)[0].split("|")
        claimed = dict(map(int, lock.split()) for lock in locks.split(",")) if locks else {}
        # Each instance's connections by their ports, looked up each time: a pool may open one meanwhile.
        for number, instance in instances.items():
            held = sum(claimed.get(port, 0) for port in client_ports(instance.pid))
            if held:
                return number, int(done), held
        return (None, int(done), 0) if int(done) == DUE_AT_ONCE else None

    state, _ = eventually(30, claiming)
    number, done_at_kill, claimed = state or (None, DUE_AT_ONCE, 0)
    check(f"{instances[number].name if number else 'an instance'} is killed mid-run, holding {claimed} claimed posts ({done_at_kill} of {DUE_AT_ONCE} published then)",
          number and done_at_kill < DUE_AT_ONCE, state)
    dying = instances.get(number)
    if dying:
        dying.stop(9)
    finished, took = eventually(30, lambda: int(sql(published)[0]) == DUE_AT_ONCE)
    check(f"the other instances publish the rest ({took:.1f} s after the kill)", finished)
    once = sql(f"""SELECT count(*) FROM posts WHERE id LIKE '{prefix}%' AND status = 'published' AND version = 2
                   AND publish_at IS NULL AND published_at = date_trunc('second', created_at) + interval '3 seconds'""")
    check(f"each of the {DUE_AT_ONCE} posts is published once, at its time", int(once[0]) == DUE_AT_ONCE, once)
    events = f"""FROM outbox WHERE key LIKE '{prefix}%' AND convert_from(payload, 'UTF8')::jsonb ->> 'type' = 'post.updated'
                 AND convert_from(payload, 'UTF8')::jsonb #>> '{{data,status}}' = 'published'"""
    counted = sql(f"SELECT count(*), count(DISTINCT key) {events}")[0]
    check("exactly one post.updated(published) each", counted == f"{DUE_AT_ONCE}|{DUE_AT_ONCE}", counted)
    sent, _ = eventually(30, lambda: sql(f"SELECT count(*) {events} AND sent_at IS NULL")[0] == "0")
    check("every event leaves the outbox for the broker", sent)
    logged = sql(f"SELECT count(*) FROM changes WHERE kind = 'post' AND id LIKE '{prefix}%' AND visibility = 'public'")
    check("the change feed's log holds each as public", int(logged[0]) == DUE_AT_ONCE, logged)
    if dying:
        dying.start()
        ready, _ = eventually(60, lambda: ready_status(suite.port("posts", number)) == 200)
        check(f"{dying.name} is ready again after its restart", ready)


def client_ports(pid):
    """The local TCP ports of a process's sockets (its connections to PostgreSQL among them)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).readlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports or {0}


def one_trace_across_services(client, suite, collector):
    """A request that carries a W3C `traceparent` through the gateway: the posts service's
    span continues it, its statements are spans of it, and the post's event carries it to every
    consumer, whose span and log line are in the same trace."""
    trace, parent = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    token = client.register("Tracer")["accessToken"]
    secrets.append(token)
    headers = {"traceparent": f"00-{trace}-{parent}-01"}
    # A new account's first post waits for posts to know the account.
    created, _ = eventually(30, lambda: client.call("POST", "/api/posts", token, {"title": "Traced", "content": "Followed."}, headers).status == 201)
    check("a traced request creates a post", created)
    consumers = {"postly-search", "postly-comments", "postly-notifications"}

    def whole():
        spans = collector.trace(trace)
        served = any(s["service"] == "postly-posts" and s["name"] == "/api/posts" and s["parent"] == parent for s in spans)
        queried = any(s["service"] == "postly-posts" and s["name"] == "db.query" for s in spans)
        applied = {s["service"] for s in spans if s["name"] == "apply post.created"}
        return served and queried and consumers <= applied

    complete, took = eventually(10, whole)
    check(f"one trace from the request through posts, its statements and every consumer ({took:.1f} s)", complete,
          sorted({(s["service"], s["name"]) for s in collector.trace(trace)}))
    logs = os.path.join(suite.run_dir, "logs")
    logged = [name for name in os.listdir(logs) if name.startswith("search") and f'"trace_id":"{trace}"' in open(os.path.join(logs, name)).read()]
    check("the consumer's log line carries the request's trace id", logged)


def main():
    # The federation journey's peer is on loopback, and its retries are checked in seconds.
    with FakeCollector() as collector, running_suite("system", check, instances=INSTANCES, manifests=MANIFESTS, settings={
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_BSP_SCHEDULE_DELAY": "200",
        "POSTLY_IMPORT_TOKEN": import_test.IMPORT_TOKEN, **federation_test.ENVIRONMENT,
    }) as suite:
        secrets.extend([suite.pexels.key, import_test.IMPORT_TOKEN])
        try:
            logged_out = walk(Client(suite.port("gateway")), suite)
            federation_test.journey(Client(suite.port("gateway")), suite.port("gateway"), check, os.path.join(suite.run_dir, "logs"))
            import_test.journey(Client(suite.port("gateway")), suite, check)
            one_trace_across_services(Client(suite.port("gateway")), suite, collector)
            feeds_read_by_readers(Client(suite.port("gateway")), suite)
            conformance(Client(suite.port("gateway")), suite)
            revocations_survive_restarts(Client(suite.port("gateway")), suite, logged_out)
            if min(suite.instances(name) for name in SERVICES) > 1:
                scheduler_killed_mid_run(Client(suite.port("gateway")), suite)
                instance_killed_under_load(Client(suite.port("gateway")), suite)
            logs = os.path.join(suite.run_dir, "logs")
            texts = {name: open(os.path.join(logs, name), errors="replace").read() for name in os.listdir(logs)}
            leaked = sorted({name for name, text in texts.items() for secret in secrets if secret in text})
            check("no log line carries the Pexels key or a token", not leaked, leaked)
        except Exception as error:  # a crash of the walk is one failure, with where it happened
            traceback.print_exc()
            check("the walk ran to its end", False, repr(error))
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
