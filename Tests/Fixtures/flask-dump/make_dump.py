#!/usr/bin/env python3
"""Writes what `mongoexport` makes of a Flask/MongoDB Postly (ChrisUBS/postly's backend/server.py):
users, posts (comments embedded) and post_likes, through pymongo's bson.json_util (mongoexport's
Extended JSON v2) with real Werkzeug password hashes. Run it with .deps/import-tools/bin/python
(deploy/install.sh makes it).

    make_dump.py                  the test fixture, every quirk of the import specification, in
                                  relaxed/, canonical/ and array/ (--jsonArray) beside this file,
                                  and expected.json: what the import must make of it
    make_dump.py --bench DIR      the reference seed's size (50 users, 2,000 posts of about 600
                                  words, 2,100 comments, 5,800 likes), relaxed, into DIR;
                                  --users/--posts/--comments/--likes make it smaller

The fixture is committed: the Swift tests and the system test read it without pymongo.
Its hashes use random salts, so every run writes other bytes with the same meaning."""
import argparse
import datetime
import json
import os
import random

from bson import ObjectId, json_util
from bson.json_util import JSONOptions, JSONMode
from werkzeug.security import generate_password_hash

HERE = os.path.dirname(os.path.abspath(__file__))
UTC = datetime.timezone.utc
RELAXED = JSONOptions(json_mode=JSONMode.RELAXED, tz_aware=True, tzinfo=UTC)
CANONICAL = JSONOptions(json_mode=JSONMode.CANONICAL, tz_aware=True, tzinfo=UTC)


def oid(seconds, n):
    """A deterministic ObjectId created at `seconds` after 2026-01-01."""
    return ObjectId(f"{1767225600 + seconds:08x}{n:016x}")


def iso(moment):
    """What Flask stored: datetime.now(UTC).isoformat(), with no fraction when microseconds are 0."""
    return moment.isoformat()


def ms(moment):
    """The contract's form of a date: UTC, milliseconds truncated."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def at(day, hour, minute, second, micro=0, tz=UTC):
    return datetime.datetime(2026, 2, day, hour, minute, second, micro, tzinfo=tz)


def fixture():
    """The documents, and what the import must make of them."""
    passwords = {
        "alice": ("alice-password-1", generate_password_hash("alice-password-1")),  # scrypt, Werkzeug 3's default
        "bob": ("bob-password-2", generate_password_hash("bob-password-2", method="pbkdf2:sha256:600000")),  # Werkzeug 2.3
        "carol": ("carol-password-3", generate_password_hash("carol-password-3", method="pbkdf2:sha256:150000")),  # Werkzeug 1.x
        "erin-old": ("erin-old-password", generate_password_hash("erin-old-password")),
        "erin": ("erin-new-password", generate_password_hash("erin-new-password")),
    }
    alice_id, bob_id, carol_id, dave_id = (oid(10 * i, i) for i in range(1, 5))
    erin_old_id, erin_id = oid(50, 5), oid(60, 6)
    google_alice, google_gina = "109876543210987654321", "108234567890123456789"

    def email_user(object_id, name, email, password, last_login, picture=None):
        return {"_id": object_id, "userId": str(ObjectId()), "name": name, "email": email, "password": password,
                "profilePicture": picture, "lastLogin": iso(last_login)}

    users = [
        # Typed with spaces and capitals; uniqueness was checked as typed.
        email_user(alice_id, "Alice", "  Alice@Example.COM ", passwords["alice"][1], at(14, 10, 20, 30, 123456)),
        email_user(bob_id, "", "bob@example.com", passwords["bob"][1], at(14, 11, 0, 0)),  # no name: its local part
        email_user(carol_id, "Carol " + "x" * 120, "carol@example.com", passwords["carol"][1], at(15, 9, 0, 0, 999999)),
        email_user(dave_id, "Dave", "dave@example.com", "plain$$dave-password", at(15, 9, 30, 0)),  # unverifiable
        # Two password documents with one email: the latest login wins, the other's content moves to it.
        email_user(erin_old_id, "Erin Old", "Erin@example.com", passwords["erin-old"][1], at(1, 8, 0, 0)),
        email_user(erin_id, "Erin", "erin@example.com", passwords["erin"][1], at(20, 8, 0, 0, 500)),
        # Google sign-ins: upserted by sub, no password, picture "" when Google gave none.
        {"_id": oid(70, 7), "userId": google_alice, "name": "Alice G", "email": "alice@example.com",
         "profilePicture": "https://lh3.googleusercontent.com/a/alice", "lastLogin": iso(at(16, 7, 0, 0, 1))},
        {"_id": oid(80, 8), "userId": google_gina, "name": "Gina", "email": "gina@gmail.com",
         "profilePicture": "", "lastLogin": iso(at(16, 7, 5, 0))},
    ]
    for user in users[:6]:
        user["userId"] = str(user["_id"])  # register stores str(ObjectId()) of the new document
    ids = {"alice": str(alice_id), "bob": str(bob_id), "carol": str(carol_id), "dave": str(dave_id),
           "erin-old": str(erin_old_id), "erin": str(erin_id), "gina": google_gina, "ghost": str(oid(5, 99))}
    authors = {key: {"userId": ids[key], "name": name, "email": f"{key}@example.com", "profilePicture": None}
               for key, name in [("alice", "Alice"), ("bob", ""), ("carol", "Carol"), ("dave", "Dave"), ("erin-old", "Erin Old"),
                                 ("erin", "Erin"), ("gina", "Gina"), ("ghost", "Ghost")]}

    def comment(n, who, content, moment):
        author = dict(authors[who])
        del author["email"]
        return {"_id": str(oid(200 + n, 200 + n)), "content": content, "author": author, "createdAt": iso(moment), "likes": 0}

    def post(n, who, title, slug, created, status="published", views=0, likes=0, cover=None, comments=(), bson_date=False):
        return {"_id": oid(100 + n, 100 + n), "title": title, "content": f"# {title}\n\nBody of post {n}, **bold** text.",
                "author": authors[who], "slug": slug, "createdAt": created if bson_date else iso(created),
                "updatedAt": iso(created), "status": status, "readTime": 1, "views": views, "likes": likes,
                "comments": list(comments), "coverImage": cover}

    posts = [
        post(1, "alice", "Hello world", "hello-world", at(14, 12, 0, 0, 123456), views=42, likes=3,
             cover="https://images.example.com/a.jpg",
             comments=[comment(1, "bob", "First!", at(14, 12, 5, 0, 654321)), comment(2, "ghost", "From a user never imported", at(14, 12, 6, 0)),
                       comment(3, "erin-old", "Erin's old account", at(14, 12, 7, 0, 1))]),
        post(2, "bob", "Hello world", "hello-world", at(14, 13, 0, 0), views=7, likes=0),  # the same slug, later: -2
        post(3, "carol", "🎉🎉", "", at(15, 10, 0, 0, 5), status="archived", views=-5, cover=""),  # emoji title: empty slug
        post(4, "erin-old", "Old account's post", "old-accounts-post", at(2, 9, 0, 0), status="draft", views="12", cover="/relative.png"),
        post(5, "gina", "Google user's post", "google-users-post", at(16, 8, 0, 0), views=3.0, likes=1,
             cover="https://images.example.com/" + "x" * 2100, bson_date=True),
        post(6, "alice", "A draft of Alice", "a-draft-of-alice", at(17, 8, 0, 0, 999999), status="draft", likes=0,
             comments=[comment(4, "alice", "Note to self", at(17, 8, 1, 0))]),
        post(7, "dave", "Dave's later Hello world", "hello-world", at(18, 8, 0, 0), views=1),  # third owner: -3
    ]
    post_ids = [str(p["_id"]) for p in posts]
    like = lambda n, p, who, moment: {"_id": oid(300 + n, 300 + n), "postId": p, "userId": ids[who], "createdAt": iso(moment)}
    likes = [
        like(1, post_ids[0], "bob", at(14, 12, 10, 0, 1)),
        like(2, post_ids[0], "carol", at(14, 12, 11, 0)),
        like(3, post_ids[0], "bob", at(14, 12, 12, 0)),  # duplicate (no unique index)
        like(4, str(oid(1, 404)), "bob", at(14, 12, 13, 0)),  # orphan: the post is gone
        like(5, post_ids[1], "erin-old", at(14, 14, 0, 0)),
        like(6, post_ids[1], "erin", at(14, 14, 1, 0)),  # the same person once merged: a duplicate
        like(7, post_ids[4], "alice", at(16, 9, 0, 0)),
        like(8, post_ids[4], "gina", at(16, 9, 1, 0)),
    ]

    expected = {
        "logins": [{"email": "alice@example.com", "password": passwords["alice"][0], "kind": "scrypt", "userId": ids["alice"]},
                   {"email": "bob@example.com", "password": passwords["bob"][0], "kind": "pbkdf2", "userId": ids["bob"]},
                   {"email": "carol@example.com", "password": passwords["carol"][0], "kind": "pbkdf2", "userId": ids["carol"]},
                   {"email": "erin@example.com", "password": passwords["erin"][0], "kind": "scrypt", "userId": ids["erin"]}],
        "refused": [{"email": "dave@example.com", "password": "dave-password", "why": "plain"},
                    {"email": "erin@example.com", "password": passwords["erin-old"][0], "why": "merged into the latest login"}],
        "aliases": [{"from": ids["erin-old"], "to": ids["erin"]}, {"from": google_alice, "to": ids["alice"]}],
        "users": 6,
        "posts": [
            {"_id": post_ids[0], "slug": "hello-world", "status": "published", "views": 42, "likes": 2, "createdAt": ms(at(14, 12, 0, 0, 123456)),
             "authorId": ids["alice"], "coverImage": "https://images.example.com/a.jpg",
             "comments": [str(oid(201, 201)), str(oid(202, 202)), str(oid(203, 203))]},
            {"_id": post_ids[1], "slug": "hello-world-2", "status": "published", "views": 7, "likes": 1, "createdAt": ms(at(14, 13, 0, 0)),
             "authorId": ids["bob"], "coverImage": None, "comments": []},
            {"_id": post_ids[2], "slug": post_ids[2], "status": "draft", "views": 0, "likes": 0, "createdAt": ms(at(15, 10, 0, 0, 5)),
             "authorId": ids["carol"], "coverImage": None, "comments": []},
            {"_id": post_ids[3], "slug": "old-accounts-post", "status": "draft", "views": 0, "likes": 0, "createdAt": ms(at(2, 9, 0, 0)),
             "authorId": ids["erin"], "coverImage": None, "comments": []},
            {"_id": post_ids[4], "slug": "google-users-post", "status": "published", "views": 3, "likes": 2, "createdAt": ms(at(16, 8, 0, 0)),
             "authorId": google_gina, "coverImage": None, "comments": []},
            {"_id": post_ids[5], "slug": "a-draft-of-alice", "status": "draft", "views": 0, "likes": 0, "createdAt": ms(at(17, 8, 0, 0, 999999)),
             "authorId": ids["alice"], "coverImage": None, "comments": [str(oid(204, 204))]},
            {"_id": post_ids[6], "slug": "hello-world-3", "status": "published", "views": 1, "likes": 0, "createdAt": ms(at(18, 8, 0, 0)),
             "authorId": ids["dave"], "coverImage": None, "comments": []},
        ],
        "comments": 4, "orphanComments": 1,
        "likes": {"read": 8, "imported": 5, "duplicate": 2, "orphan": 1},
    }
    return {"users": users, "posts": posts, "post_likes": likes}, expected


def write(collections, folder, options, array=False):
    os.makedirs(folder, exist_ok=True)
    for name, documents in collections.items():
        with open(os.path.join(folder, f"{name}.json"), "w") as f:
            if array:
                f.write("[" + ",".join(json_util.dumps(d, json_options=options) for d in documents) + "]")
            else:
                f.writelines(json_util.dumps(d, json_options=options) + "\n" for d in documents)


def bench(folder, user_count=50, post_count=2000, comment_total=2100, like_total=5800, seed=42):
    """The reference seed's size: texts of about 600 words, comments and likes skewed to a few posts."""
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(6000)] + "people time year work world life system program question".split()
    users, posts, likes = [], [], []
    hashed = generate_password_hash("bench-password")
    for n in range(user_count):
        user_id = oid(n, n)
        users.append({"_id": user_id, "userId": str(user_id), "name": f"Bench user {n}", "email": f"bench{n}@example.com",
                      "password": hashed, "profilePicture": None, "lastLogin": iso(at(1, 0, 0, 0, n))})
    comment_count = 0
    for n in range(post_count):
        author = users[rng.randrange(user_count)]
        created = at(1, 0, 0, 0) + datetime.timedelta(minutes=n, microseconds=rng.randrange(1_000_000))
        length = max(100, min(2000, int(rng.lognormvariate(6.4, 0.35))))
        text = " ".join(rng.choice(words) for _ in range(length))
        comments = []
        while comment_count < comment_total and len(comments) < (3 if n % 2 == 0 else 0) + (1 if n < 100 else 0):
            who = users[rng.randrange(user_count)]
            comments.append({"_id": str(ObjectId()), "content": f"Comment {comment_count}", "author": {
                "userId": who["userId"], "name": who["name"], "profilePicture": None},
                "createdAt": iso(created + datetime.timedelta(seconds=len(comments) + 1)), "likes": 0})
            comment_count += 1
        posts.append({"_id": oid(100_000 + n, n), "title": f"Bench post {n} " + " ".join(rng.choice(words) for _ in range(4)),
                      "content": text, "author": {"userId": author["userId"], "name": author["name"], "email": author["email"], "profilePicture": None},
                      "slug": f"bench-post-{n}", "createdAt": iso(created), "updatedAt": iso(created),
                      "status": "draft" if n % 20 == 0 else "published", "readTime": 3, "views": rng.randrange(500),
                      "likes": 0, "comments": comments, "coverImage": None})
    pairs = set()
    like_total = min(like_total, post_count * user_count // 2)
    while len(pairs) < like_total:
        pairs.add((rng.randrange(post_count) if rng.random() < 0.5 else rng.randrange(min(100, post_count)), rng.randrange(user_count)))
    for k, (p, u) in enumerate(sorted(pairs)):
        likes.append({"_id": oid(200_000 + k, k), "postId": str(posts[p]["_id"]), "userId": users[u]["userId"], "createdAt": iso(at(2, 0, 0, 0))})
        posts[p]["likes"] += 1
    write({"users": users, "posts": posts, "post_likes": likes}, folder, RELAXED)
    print(f"{folder}: {len(users)} users, {len(posts)} posts, {comment_count} comments, {len(likes)} likes")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", metavar="DIR")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--posts", type=int, default=2000)
    parser.add_argument("--comments", type=int, default=2100)
    parser.add_argument("--likes", type=int, default=5800)
    args = parser.parse_args()
    if args.bench:
        bench(args.bench, args.users, args.posts, args.comments, args.likes)
        return
    collections, expected = fixture()
    write(collections, os.path.join(HERE, "relaxed"), RELAXED)
    write(collections, os.path.join(HERE, "canonical"), CANONICAL)
    write(collections, os.path.join(HERE, "array"), RELAXED, array=True)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
