#!/usr/bin/env python3
"""Faults on the whole suite, from outside, as an operator would cause them, with figures.
Starts the suite as deploy/system_test.py does (deploy/up.sh, debug build, free ports, a
temporary POSTLY_RUN_DIR, a fake Pexels) and drives it only through the gateway:

  (a) the broker stopped for 30 s during 200 writes across posts and comments, then started
      again (empty: tansu keeps nothing): every write accepted, and search and notifications
      hold every one exactly once within 2 s of the broker's return, as the posts' comment
      counts do;
  (b) PostgreSQL stopped for 10 s under load, then started again: 503 within 1 s during the
      outage, never a 500 or a hang, writes succeed again within 5 s, nothing acknowledged lost;
  (c) search and notifications killed with SIGKILL while writes go on and a notifications
      stream is open, then restarted: everything applied within 2 s of the last write, nothing
      missing, nothing doubled (search, the list, and the stream resumed with its last event
      id).

Prints a table of the figures and ends with `N passed, M failed`. Run on demand:

    deploy/faults.py
"""
import collections
import http.client
import os
import sys
import threading
import time
import traceback
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from postly_suite import lib
from postly_suite.checks import Checks
from postly_suite.client import Client, ready_status, unique_word
from postly_suite.suite import eventually, running_suite, settle

check = Checks()
figures = []


def figure(name, value):
    figures.append((name, value))
    print(f"     {name}: {value}", flush=True)


def crash_and_restart(suite, name):
    """SIGKILL, as a crash (nothing drained, flushed or committed on the way out), then the
    service started again as deploy/up.sh did (binary, environment, pid file, log); returns the
    seconds from exec until /health/ready answers 200."""
    service = suite.service(name)
    service.stop(signal=9)
    time.sleep(0.5)
    started = time.monotonic()
    service.start()
    ready, _ = eventually(60, lambda: ready_status(suite.port(name)) == 200)
    return time.monotonic() - started if ready else None


# --- requests with their timing ------------------------------------------------------------------

class Outcome:
    def __init__(self, kind, started, ended, status, body):
        self.kind, self.started, self.ended, self.status, self.body = kind, started, ended, status, body

    @property
    def seconds(self):
        return self.ended - self.started


def timed(client, kind, method, path, token=None, body=None):
    """One request; a connection error or no answer within the client's timeout is a status of its own."""
    started = time.monotonic()
    try:
        answer = client.call(method, path, token, body)
        status, answer_body = answer.status, answer.body
    except TimeoutError:
        status, answer_body = "no answer", None
    except (OSError, http.client.HTTPException) as error:
        status, answer_body = f"connection {type(error).__name__}", None
    return Outcome(kind, started, time.monotonic(), status, answer_body)


def register(client, name):
    return client.register(name)["accessToken"]


def all_notifications(client, token):
    found, page = [], 1
    while True:
        answer = client.call("GET", f"/api/notifications?page={page}&limit=100", token)
        if answer.status != 200:
            return None
        found += answer.body["notifications"]
        if page >= answer.body["pagination"]["totalPages"]:
            return found
        page += 1


def exactly_once(found, expected):
    """(missing, doubled) of the ids in `expected` among `found`."""
    counts = collections.Counter(i for i in found if i in expected)
    return len(expected - set(counts)), sum(n - 1 for n in counts.values() if n > 1)


def settle_consumers(client, author, reader):
    """The warm-up post, once every consumer has applied a first event: the timed checks
    measure the fault, not the start."""
    post, ready, took = settle(client, author, reader, unique_word(), 90)
    check(f"every consumer has joined and applied a first event ({took:.1f} s)", ready)
    return post


# --- (a) the broker away for 30 s ------------------------------------------------------------------

def broker_outage(client, suite):
    print("(a) the broker stopped for 30 s during 200 writes", flush=True)
    broker_dir = os.path.join(suite.run_dir, "broker")
    ada, grace = register(client, "Ada"), register(client, "Grace")
    word = unique_word()
    target = settle_consumers(client, ada, grace)

    lib.broker_stop(broker_dir)
    stopped = time.monotonic()
    writes = []
    for index in range(200):
        # Spread over 25 of the 30 seconds.
        time.sleep(max(0, stopped + index * 0.125 - time.monotonic()))
        if index % 2 == 0:
            writes.append(timed(client, "post", "POST", "/api/posts", ada, {"title": f"Outage {word} {index}", "content": "written while the broker is away"}))
        else:
            writes.append(timed(client, "comment", "POST", f"/api/posts/{target}/comments", grace, {"content": f"outage comment {index}"}))
    accepted = [w for w in writes if w.status == 201]
    figure("(a) writes accepted while the broker was away", f"{len(accepted)}/{len(writes)} (slowest {max(w.seconds for w in writes):.2f} s)")
    check("every write is accepted while the broker is away", len(accepted) == len(writes),
          collections.Counter(w.status for w in writes))
    time.sleep(max(0, stopped + 30 - time.monotonic()))

    lib.broker_start(broker_dir, suite.port("broker"))
    back = time.monotonic()
    posts = {w.body["_id"] for w in accepted if w.kind == "post"}
    comments = {w.body["_id"] for w in accepted if w.kind == "comment"}
    def search_state():
        ids, total = client.search(word)
        return exactly_once(ids or [], posts) + (total,)

    def notifications_state():
        return exactly_once([n.get("commentId") for n in all_notifications(client, ada) or []], comments)

    done = {}
    def converged():
        now = time.monotonic() - back
        if "search" not in done and search_state() == (0, 0, len(posts)):
            done["search"] = now
        if "notifications" not in done and notifications_state()[0] == 0:
            done["notifications"] = now
        if "posts" not in done and client.call("GET", f"/api/posts/{target}").body.get("commentsCount") == 1 + len(comments):
            done["posts"] = now
        return len(done) == 3

    eventually(60, converged)
    for name, what in [("search", "posts found by search"), ("notifications", "comments notified"), ("posts", "comments counted in their post")]:
        took = done.get(name)
        figure(f"(a) {what}, after the broker's return", f"{took:.2f} s" if took is not None else "not within 60 s")
    for name in ["search", "notifications", "posts"]:
        check(f"{name} holds every write within 2 s of the broker's return", done.get(name, 60) <= 2)
    # Whatever was going to arrive twice has had time to.
    time.sleep(2)
    (search_missing, search_doubled, _), (notified_missing, notified_doubled) = search_state(), notifications_state()
    figure("(a) missing / doubled (search, notifications)", f"{search_missing}/{search_doubled}, {notified_missing}/{notified_doubled}")
    check("nothing is missing or doubled", search_missing == search_doubled == notified_missing == notified_doubled == 0)
    # Once the broker is back, a new event takes its usual path.
    answer = client.call("POST", f"/api/posts/{target}/comments", grace, {"content": "after the return"})
    shown, took = eventually(5, lambda: client.call("GET", f"/api/posts/{target}").body.get("commentsCount") == 2 + len(comments))
    figure("(a) a comment written after the return, in its post", f"{took:.2f} s")
    check("events flow as usual after the return", answer.status == 201 and shown)


# --- (b) PostgreSQL away for 10 s --------------------------------------------------------------

def postgres_restart(client, suite):
    print("(b) PostgreSQL stopped for 10 s under load", flush=True)
    postgres_dir = os.path.join(suite.run_dir, "postgres")
    ada, grace = register(client, "Ada"), register(client, "Grace")
    target = client.first_post(ada, "Under load", "comments go here")
    # A hang is a request without an answer for 10 s.
    impatient = Client(client.port, timeout=10)
    outcomes, stop = [], threading.Event()

    def load(worker):
        index = 0
        while not stop.is_set():
            index += 1
            step = (worker + index) % 3
            if step == 0:
                outcomes.append(timed(impatient, "post", "POST", "/api/posts", ada, {"title": f"Load {worker}-{index}", "content": "under load"}))
            elif step == 1:
                outcomes.append(timed(impatient, "comment", "POST", f"/api/posts/{target}/comments", grace, {"content": f"load {worker}-{index}"}))
            else:
                outcomes.append(timed(impatient, "read", "GET", "/api/posts?limit=5"))
            time.sleep(0.02)

    with ThreadPoolExecutor(4) as workers:
        for worker in range(4):
            workers.submit(load, worker)
        time.sleep(3)
        lib.postgres_stop(postgres_dir)
        down = time.monotonic()
        time.sleep(10)
        # Answers before this are the outage's; PostgreSQL may answer again before the start returns.
        restarting = time.monotonic()
        lib.postgres_start(postgres_dir, suite.port("postgres"), durable=True)
        up = time.monotonic()
        time.sleep(8)
        stop.set()

    statuses = collections.Counter(o.status for o in outcomes)
    figure("(b) answers by status", ", ".join(f"{status}: {count}" for status, count in sorted(statuses.items(), key=str)))
    slowest = max(outcomes, key=lambda o: o.seconds)
    figure("(b) slowest answer", f"{slowest.seconds:.3f} s ({slowest.kind}, {slowest.status})")
    during = [o for o in outcomes if o.started >= down and o.ended <= restarting]
    slowest_during = max((o.seconds for o in during), default=0)
    figure("(b) during the outage", f"{len(during)} answers, {sum(o.status == 503 for o in during)} of them 503, slowest {slowest_during:.3f} s")
    check("no 500 and no request without an answer", not any(o.status == 500 or not isinstance(o.status, int) for o in outcomes), statuses)
    check("writes during the outage answer 503 within 1 s",
          all(o.status == 503 and o.seconds <= 1 for o in during if o.kind != "read") and slowest_during <= 1,
          collections.Counter((o.kind, o.status) for o in during))
    recovered = sorted(o.ended - up for o in outcomes if o.started >= up and o.kind != "read" and o.status == 201)
    figure("(b) first acknowledged write after PostgreSQL's return", f"{recovered[0]:.3f} s" if recovered else "none")
    check("writes succeed again within 5 s", recovered and recovered[0] <= 5)

    posts = [o.body["_id"] for o in outcomes if o.kind == "post" and o.status == 201]
    comments = {o.body["_id"] for o in outcomes if o.kind == "comment" and o.status == 201}
    lost_posts = [post for post in posts if client.call("GET", f"/api/posts/{post}").status != 200]
    listed = client.call("GET", f"/api/posts/{target}/comments").body
    lost_comments = comments - {comment["_id"] for comment in listed}
    figure("(b) acknowledged and lost", f"posts {len(lost_posts)} of {len(posts)}, comments {len(lost_comments)} of {len(comments)}")
    check("nothing acknowledged is lost", not lost_posts and not lost_comments)


# --- (c) search and notifications killed -----------------------------------------------------------

def consumers_killed(client, suite):
    print("(c) search and notifications killed with SIGKILL mid-stream, then restarted", flush=True)
    ada, grace = register(client, "Ada"), register(client, "Grace")
    word = unique_word()
    target = settle_consumers(client, ada, grace)
    client.call("POST", "/api/notifications/read", ada, {"all": True})
    streams = [client.stream("/api/notifications/stream", ada)]
    writes, restarts = [], {}

    def write_all():
        for index in range(150):
            if index % 2 == 0:
                writes.append(timed(client, "post", "POST", "/api/posts", ada, {"title": f"Killed {word} {index}", "content": "written around a crash"}))
            else:
                writes.append(timed(client, "comment", "POST", f"/api/posts/{target}/comments", grace, {"content": f"crash comment {index}"}))
            time.sleep(0.08)

    writer = threading.Thread(target=write_all)
    writer.start()
    began = time.monotonic()
    for name, at in [("search", 3), ("notifications", 8)]:
        time.sleep(max(0, began + at - time.monotonic()))
        restarts[name] = crash_and_restart(suite, name)
        figure(f"(c) {name} ready after its restart", f"{restarts[name]:.2f} s" if restarts[name] else "not within 60 s")
    # The stream ended with the killed instance; the client resumes after the last id it got.
    last = streams[0].last_event_id
    check("the open stream ended with its instance", eventually(5, lambda: streams[0].closed)[0])
    path = "/api/notifications/stream" + (f"?lastEventId={urllib.parse.quote(last)}" if last else "")
    streams.append(client.stream(path, ada))
    writer.join()
    accepted = [w for w in writes if w.status == 201]
    check("every write around the crashes is accepted", len(accepted) == len(writes), collections.Counter(w.status for w in writes))

    posts = {w.body["_id"] for w in accepted if w.kind == "post"}
    comments = {w.body["_id"] for w in accepted if w.kind == "comment"}
    def missing_and_doubled():
        ids, _ = client.search(word)
        listed = [n.get("commentId") for n in all_notifications(client, ada) or []]
        streamed = [n.get("commentId") for stream in streams for n in stream.notifications()]
        return {"search": exactly_once(ids or [], posts), "notifications": exactly_once(listed, comments),
                "stream": exactly_once(streamed, comments)}
    done, took = eventually(30, lambda: all(missing == 0 for missing, _ in missing_and_doubled().values()))
    figure("(c) everything applied after the last write", f"{took:.2f} s" if done else "not within 30 s")
    check("everything is applied within 2 s of the last write", done and took <= 2)
    # Whatever was going to arrive twice has had time to.
    time.sleep(2)
    results = missing_and_doubled()
    figure("(c) missing / doubled", ", ".join(f"{name} {m}/{d}" for name, (m, d) in results.items()) + f" (of {len(posts)} posts, {len(comments)} comments)")
    check("search has every post once", results["search"] == (0, 0), results["search"])
    check("notifications list every comment once", results["notifications"] == (0, 0), results["notifications"])
    check("the resumed stream delivered every comment once", results["stream"] == (0, 0), results["stream"])
    for stream in streams:
        stream.close()


def main():
    with running_suite("faults", check) as suite:
        client = Client(suite.port("gateway"))
        for scenario in [lambda: broker_outage(client, suite),
                         lambda: postgres_restart(client, suite),
                         lambda: consumers_killed(client, suite)]:
            try:
                scenario()
            except Exception as error:  # one scenario's crash is one failure; the next still runs
                traceback.print_exc()
                check("the scenario ran to its end", False, repr(error))
    width = max(len(name) for name, _ in figures) if figures else 0
    print("\nfigures")
    for name, value in figures:
        print(f"  {name:<{width}}  {value}")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
