"""The import of a Flask/MongoDB Postly (postly-import) against the running suite, through the
gateway as the app sees the result: deploy/system_test.py runs `journey` once in its suite,
whose services it started with IMPORT_TOKEN.

The dump is Tests/Fixtures/flask-dump (made by its make_dump.py, every quirk of the
specification, and expected.json: what it must become); a larger one for the kill -9 and
resume is made on the spot with .deps/import-tools (deploy/install.sh)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid

from postly_suite import ROOT, manifests
from postly_suite.checks import decodes_as_app_post
from postly_suite.suite import eventually

# The services' import token (their POSTLY_IMPORT_TOKEN), and the CLI's.
IMPORT_TOKEN = f"import-{uuid.uuid4().hex}"
FIXTURE = os.path.join(ROOT, "Tests", "Fixtures", "flask-dump")
JOB = os.path.join(ROOT, "deploy", "k8s", "jobs", "import.yaml")


def importer():
    """The postly-import binary of the suite's build configuration (built if it is not)."""
    configuration = os.environ.get("POSTLY_BUILD_CONFIGURATION", "debug")
    subprocess.run(["swift", "build", "-c", configuration, "--product", "postly-import"], cwd=ROOT, check=True, capture_output=True)
    bin_path = subprocess.run(["swift", "build", "-c", configuration, "--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True)
    return os.path.join(bin_path.stdout.strip(), "postly-import")


def command(binary, suite, dump, work, token=IMPORT_TOKEN, likes="post_likes.json", users="users.json"):
    service = lambda name: f"http://127.0.0.1:{suite.port(name)}"
    return ([binary, "--users", os.path.join(dump, users), "--posts", os.path.join(dump, "posts.json"), "--likes", os.path.join(dump, likes),
             "--auth", service("auth"), "--posts-url", service("posts"), "--comments-url", service("comments"),
             "--state", os.path.join(work, "state.json"), "--report", os.path.join(work, "report.json")],
            dict(os.environ, POSTLY_IMPORT_TOKEN=token))


def run(binary, suite, dump, work, **options):
    """One run to its end: (exit code, report or None, stderr)."""
    arguments, environment = command(binary, suite, dump, work, **options)
    return finished(subprocess.run(arguments, env=environment, capture_output=True, text=True, timeout=600), work)


def run_as_job(binary, suite, dump, volume):
    """One run as the Kubernetes Job deploy/k8s/jobs/import.yaml makes it, on this machine: the
    dump copied into the folder that stands for its volume (the operator's kubectl cp), then its
    container's command with exactly its environment, each Service's address that service's."""
    for name in ("users.json", "posts.json", "post_likes.json"):
        shutil.copy(os.path.join(dump, name), volume)
    services = {f"http://{name}:8080": f"http://127.0.0.1:{suite.port(name)}" for name in ("auth", "posts", "comments")}
    arguments, environment = manifests.job(JOB, binary, {"POSTLY_IMPORT_TOKEN": IMPORT_TOKEN}, {"import": volume}, services)
    return finished(subprocess.run(arguments, env=environment, capture_output=True, text=True, timeout=600), volume)


def finished(done, work):
    """(exit code, the report it wrote when it ran to its end, stderr)."""
    path = os.path.join(work, "report.json")
    report = json.load(open(path)) if os.path.exists(path) and done.returncode in (0, 1) else None
    return done.returncode, report, done.stderr


def sql(suite, database, query):
    """Rows of `query` in one of the suite's databases, as lists of text."""
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    out = subprocess.run([psql, "-h", "127.0.0.1", "-p", str(suite.port("postgres")), "-U", "postgres", "-d", database, "-AtF", "\t", "-c", query],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def post_created_events(suite, ids):
    """How many post.created events the posts outbox holds for each of `ids`."""
    rows = sql(suite, "postly_posts", "SELECT key, count(*) FROM outbox WHERE convert_from(payload, 'UTF8')::jsonb->>'type' = 'post.created' GROUP BY key")
    counts = {key: int(n) for key, n in rows}
    return {i: counts.get(i, 0) for i in ids}


def outbox_sizes(suite):
    return {name: int(sql(suite, f"postly_{name}", "SELECT count(*) FROM outbox")[0][0]) for name in ("auth", "posts", "comments")}


def journey(client, suite, check):
    binary = importer()
    expected = json.load(open(os.path.join(FIXTURE, "expected.json")))
    with tempfile.TemporaryDirectory(prefix="postly-import.") as work:
        code, report, stderr = run_as_job(binary, suite, os.path.join(FIXTURE, "relaxed"), work)
        ended = time.monotonic()
        check("postly-import, run as its Kubernetes Job runs it, takes the fixture to its end (exit 0)", code == 0 and report, f"{code} {stderr[-600:]}")
        if not report:
            return
        counts = report["counts"]
        check("every user, post, comment and like is created",
              [counts[c]["created"] for c in ("users", "posts", "comments", "likes")]
              == [expected["users"], len(expected["posts"]), expected["comments"], expected["likes"]["imported"]], counts)
        check("the report counts the passwords by kind, the merges, orphans and duplicates",
              report["passwords"] == {"scrypt": 2, "pbkdf2": 2, "bcrypt": 0, "unverifiable": 1} and counts["users"]["merged"] == 2
              and counts["likes"]["duplicate"] == expected["likes"]["duplicate"] and counts["likes"]["orphan"] == expected["likes"]["orphan"]
              and counts["comments"]["orphan"] == expected["orphanComments"], report["passwords"])

        # Views as imported, read before any GET counts one.
        views = dict(sql(suite, "postly_posts", "SELECT id, views FROM posts WHERE id IN (%s)" % ",".join(f"'{p['_id']}'" for p in expected["posts"])))
        check("views are kept (a count that is not one became 0)", {i: int(v) for i, v in views.items()} == {p["_id"]: p["views"] for p in expected["posts"]}, views)

        # Search has every published post within 5 s of the run.
        published = [p for p in expected["posts"] if p["status"] == "published"]
        titles = {p["_id"]: client.call("GET", f"/api/posts/{p['_id']}").body.get("title") for p in published}

        def searchable():
            return all(p["_id"] in (client.search(titles[p["_id"]])[0] or []) for p in published)

        found, _ = eventually(max(0.0, 5 - (time.monotonic() - ended)), searchable)
        check(f"search finds each of the {len(published)} published posts within 5 s of the run", found)

        # Every email user logs in with the old password; the hash is then bcrypt.
        tokens = {}
        for login in expected["logins"]:
            answer = client.call("POST", "/api/auth/login/email", body={"email": login["email"], "password": login["password"]})
            check(f"{login['email']} ({login['kind']}) logs in with the Flask password", answer.status == 200, answer)
            if answer.status == 200:
                tokens[login["userId"]] = answer.body["accessToken"]
                check(f"{login['email']} keeps the Flask userId", answer.body["user"]["userId"] == login["userId"], answer)
        hashes = dict(sql(suite, "postly_auth", "SELECT id, password_hash FROM users WHERE id IN (%s)"
                          % ",".join(f"'{login['userId']}'" for login in expected["logins"])))
        # The auth service's bcrypt is `$2b$`, pre-hashed with SHA-256 as `$bcrypt-sha256$$2b$...` (PasswordHasher).
        check("every verified Flask hash is now bcrypt", all(hashes.get(l["userId"], "").removeprefix("$bcrypt-sha256$").startswith("$2b$")
                                                             for l in expected["logins"]), hashes)
        for refused in expected["refused"]:
            answer = client.call("POST", "/api/auth/login/email", body={"email": refused["email"], "password": refused["password"]})
            check(f"{refused['email']} with a {refused['why']} password gets 401", answer.status == 401, answer)

        # Old ids and Flask slugs open their posts, views kept, likes recounted, comments in order.
        for want in expected["posts"]:
            token = tokens.get(want["authorId"]) if want["status"] == "draft" else None
            if want["status"] == "draft" and not token:
                continue
            by_id = client.call("GET", f"/api/posts/{want['_id']}", token)
            post = by_id.body if by_id.status == 200 else {}
            check(f"GET /api/posts/{want['_id']} answers the imported post", by_id.status == 200 and post.get("_id") == want["_id"], by_id)
            check(f"{want['_id']}: slug, status, likes recounted, createdAt in ms, author as imported",
                  [post.get("slug"), post.get("status"), post.get("likes"), post.get("createdAt"), (post.get("author") or {}).get("userId")]
                  == [want["slug"], want["status"], want["likes"], want["createdAt"], want["authorId"]],
                  post and {k: post.get(k) for k in ("slug", "status", "likes", "createdAt", "author")})
            check(f"{want['_id']}: the app's decoder takes it (every key, times in ms)", decodes_as_app_post(post), post and sorted(post))
            check(f"{want['_id']}: comments in their Flask order", [c["_id"] for c in post.get("comments", [])] == want["comments"], post.get("comments"))
            by_slug = client.call("GET", f"/api/posts/slug/{want['slug']}", token)
            check(f"/api/posts/slug/{want['slug']} answers the same post", by_slug.status == 200 and by_slug.body.get("_id") == want["_id"], by_slug)
        alias = expected["aliases"][0]
        answer = client.call("GET", f"/api/users/{alias['from']}/posts")
        check("a merged user's old id still lists the posts (alias)", answer.status == 200, answer)

        # Imported events notify nobody.
        quiet = {uid: client.call("GET", "/api/notifications", token) for uid, token in tokens.items()}
        check("no notification was created by the import", all(a.status == 200 and not a.body.get("notifications") for a in quiet.values()),
              {uid: a.status for uid, a in quiet.items()})

        # A second run creates nothing and adds no event.
        before = outbox_sizes(suite)
        code, again, stderr = run(binary, suite, os.path.join(FIXTURE, "relaxed"), work)
        check("a second run exits 0 and reports created: 0 everywhere", code == 0 and again
              and all(again["counts"][c]["created"] == 0 for c in ("users", "posts", "comments", "likes")), f"{code} {again and again['counts']} {stderr[-300:]}")
        check("a second run leaves the outbox counts unchanged", outbox_sizes(suite) == before, (before, outbox_sizes(suite)))

        # The canonical and --jsonArray exports of the same data are the same import.
        for form in ("canonical", "array"):
            os.makedirs(os.path.join(work, form))
            code, same, _ = run(binary, suite, os.path.join(FIXTURE, form), os.path.join(work, form))
            check(f"the {form} export imports as the same data (all existing)", code == 0 and same
                  and [same["counts"][c]["existing"] for c in ("users", "posts", "comments", "likes")] == [counts[c]["created"] for c in ("users", "posts", "comments", "likes")],
                  same and same["counts"])

        # Bad input and a refused token.
        bson = os.path.join(work, "users.bson")
        open(bson, "wb").write(b"\x05\x00\x00\x00\x00")
        code, _, stderr = run(binary, suite, os.path.join(FIXTURE, "relaxed"), work, users=bson)
        check("a .bson dump exits 2 naming bsondump", code == 2 and "users.bson: BSON dumps are not read; convert first: bsondump --outFile users.json users.bson" in stderr, stderr)
        os.makedirs(os.path.join(work, "refused"))
        started = time.monotonic()
        code, _, stderr = run(binary, suite, os.path.join(FIXTURE, "relaxed"), os.path.join(work, "refused"), token="not-the-token")
        check(f"a wrong token exits 3 after its retries ({time.monotonic() - started:.1f} s)", code == 3 and "401" in stderr and "5 retries" in stderr, stderr[-300:])

        killed_and_resumed(binary, suite, check, work)


def killed_and_resumed(binary, suite, check, work):
    """kill -9 after a batch, run again: the rows and events of a clean run."""
    dump = os.path.join(work, "resume-dump")
    python = os.path.join(ROOT, ".deps", "import-tools", "bin", "python")
    subprocess.run([python, os.path.join(FIXTURE, "make_dump.py"), "--bench", dump, "--users", "20", "--posts", "400", "--comments", "300", "--likes", "800"],
                   check=True, capture_output=True)
    state_dir = os.path.join(work, "resume")
    os.makedirs(state_dir)
    arguments, environment = command(binary, suite, dump, state_dir)
    process = subprocess.Popen(arguments, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state_path = os.path.join(state_dir, "state.json")

    def after_first_posts_batch():
        try:
            state = json.load(open(state_path))
        except (OSError, ValueError):
            return None
        return state if state["collection"] != "users" else None

    state, _ = eventually(120, after_first_posts_batch)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    check("the resume run was killed after an acknowledged posts batch", state and not state["done"], state)
    code, report, stderr = run(binary, suite, dump, state_dir)
    check("the killed run, run again, ends with exit 0", code == 0 and report, f"{code} {stderr[-300:]}")
    if not report:
        return
    # A batch the services acknowledged while the CLI died before recording it is sent again: `existing`.
    check("the resumed report's counts cover the whole import (as a clean run's)",
          [report["counts"][c]["created"] + report["counts"][c]["existing"] for c in ("users", "posts", "comments", "likes")] == [20, 400, 300, 800]
          and not report["rejected"], report["counts"])
    post_ids = [json.loads(line)["_id"]["$oid"] for line in open(os.path.join(dump, "posts.json"))]
    rows = int(sql(suite, "postly_posts", "SELECT count(*) FROM posts WHERE id IN (%s)" % ",".join(f"'{i}'" for i in post_ids))[0][0])
    events = post_created_events(suite, post_ids)
    check("after the resume every post is there once with exactly one post.created", rows == 400 and set(events.values()) == {1},
          (rows, sorted(set(events.values()))))
