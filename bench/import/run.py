#!/usr/bin/env python3
"""bench/import.sh's measurement: makes the dump, runs postly-import twice, waits for the consumers.

    run.py BINARY GATEWAY AUTH_URL POSTS_URL COMMENTS_URL"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy"))
from postly_suite import ROOT  # noqa: E402
from postly_suite.client import Client  # noqa: E402
from postly_suite.suite import eventually  # noqa: E402


def main(binary, gateway, auth, posts, comments):
    client = Client.at(gateway)
    with tempfile.TemporaryDirectory(prefix="postly-import-bench.") as work:
        dump = os.path.join(work, "dump")
        python = os.path.join(ROOT, ".deps", "import-tools", "bin", "python")
        subprocess.run([python, os.path.join(ROOT, "Tests", "Fixtures", "flask-dump", "make_dump.py"), "--bench", dump], check=True)
        lines = [json.loads(line) for line in open(os.path.join(dump, "posts.json"))]
        published = sum(1 for p in lines if p["status"] == "published")
        commented = [(p["_id"]["$oid"], len(p["comments"])) for p in lines if p["comments"] and p["status"] == "published"]

        def run(name):
            arguments = [binary, "--users", f"{dump}/users.json", "--posts", f"{dump}/posts.json", "--likes", f"{dump}/post_likes.json",
                         "--auth", auth, "--posts-url", posts, "--comments-url", comments,
                         "--state", f"{work}/state.json", "--report", f"{work}/{name}.json"]
            started = time.monotonic()
            done = subprocess.run(arguments, capture_output=True, text=True)
            took = time.monotonic() - started
            if done.returncode not in (0, 1):
                sys.exit(f"postly-import exited {done.returncode}: {done.stderr[-1000:]}")
            print(done.stdout, flush=True)
            return took, json.load(open(f"{work}/{name}.json"))

        first, report = run("first")
        ended = time.monotonic()
        created = {c: report["counts"][c]["created"] for c in ("users", "posts", "comments", "likes")}

        def caught_up():
            _, total = client.search("bench")
            if total < published:
                return False
            return all(client.call("GET", f"/api/posts/{i}").body.get("commentsCount") == n for i, n in commented[-20:])

        caught, _ = eventually(120, caught_up)
        converged = time.monotonic() - ended
        second, again = run("second")
        print(f"first run   {first:6.1f} s  (target <= 60 s)  created {created}")
        print(f"second run  {second:6.1f} s  (target <= 15 s)  created {sum(again['counts'][c]['created'] for c in created)}")
        print(f"consumers   {converged:6.1f} s after the first run  (target <= 30 s){'' if caught else '  NOT caught up after 120 s'}")


if __name__ == "__main__":
    main(*sys.argv[1:6])
