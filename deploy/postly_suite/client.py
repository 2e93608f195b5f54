"""HTTP to the suite as the app speaks it (JSON, bearer tokens), through the gateway or to one
service: requests, accounts, posts, search and the notifications event stream."""
import http.client
import json
import random
import socket
import string
import sys
import threading
import time
import urllib.parse

from postly_suite.suite import eventually


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, {k.lower(): v for k, v in headers.items()}, body

    def __repr__(self):
        return f"{self.status} {json.dumps(self.body)[:300] if not isinstance(self.body, str) else self.body[:300]}"


class Client:
    def __init__(self, port, timeout=30, host="127.0.0.1"):
        self.host, self.port, self.timeout = host, port, timeout

    @classmethod
    def at(cls, url, timeout=30):
        """A client of `http://HOST:PORT`."""
        parts = urllib.parse.urlsplit(url)
        return cls(parts.port, timeout, parts.hostname)

    def connection(self, timeout=None):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout or self.timeout)

    def call(self, method, path, token=None, body=None, headers=None):
        """One request; its status, headers and body (JSON decoded where it is JSON)."""
        connection = self.connection()
        # The app sends this on every request, bodiless likes and deletes included.
        all_headers = {"Content-Type": "application/json"}
        if token:
            all_headers["Authorization"] = f"Bearer {token}"
        all_headers.update(headers or {})
        data = json.dumps(body).encode() if body is not None else None
        try:
            connection.request(method, path, body=data, headers=all_headers)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return Answer(response.status, dict(response.getheaders()), parsed)

    def call_or_exit(self, method, path, token=None, body=None, patience=0):
        """A request that must succeed, for the benches: its JSON answer, or the process ends
        with what was answered. A 503 is tried again for `patience` seconds (a post the
        comments service learns of by its event a moment after it was created)."""
        deadline = time.monotonic() + patience
        while True:
            answer = self.call(method, path, token, body)
            if answer.status != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if answer.status >= 300:
            sys.exit(f"{method} {path} answered {answer.status}: {str(answer.body)[:300]!r}")
        return answer.body

    def register(self, name):
        """A new account's session (accessToken, refreshToken, user)."""
        email = f"{''.join(name.split()).lower()}.{unique_word()}@example.com"
        return self.session("POST", "/api/auth/register", {"name": name, "email": email, "password": "correct horse"})

    def login(self, email, password):
        return self.session("POST", "/api/auth/login/email", {"email": email, "password": password})

    def session(self, method, path, body):
        # An exception, not an exit: a fault run counts it as its scenario's failure and goes on.
        answer = self.call(method, path, body=body)
        if answer.status not in (200, 201) or "accessToken" not in (answer.body or {}):
            raise RuntimeError(f"{method} {path} answered {answer}")
        return answer.body

    def first_post(self, author, title, content):
        """A new account's first post, the id: answered 503 until the posts service has
        consumed its user.registered (seconds while consumers join their groups after a start)."""
        post, _ = eventually(30, lambda: self.call("POST", "/api/posts", author, {"title": title, "content": content}).body.get("_id"))
        return post

    def search(self, words, limit=100):
        """The ids of the first page search finds for `words` and X-Total-Count, or (None, 0)
        while search does not answer."""
        answer = self.call("GET", f"/api/posts/search?q={urllib.parse.quote(words)}&page=1&limit={limit}")
        if answer.status != 200:
            return None, 0
        return [post["_id"] for post in answer.body], int(answer.headers.get("x-total-count", "-1"))

    def stream(self, path, token=None, timeout=60):
        return EventStream(self.connection(timeout), path, token)


def ready_status(port):
    """What a service's /health/ready answers on its own port; None while nothing listens."""
    try:
        return Client(port).call("GET", "/health/ready").status
    except OSError:
        return None


def unique_word():
    """A word nothing else contains, nor comes within search's two typos of."""
    return "".join(random.choices(string.ascii_lowercase, k=12))


class EventStream:
    """An open `text/event-stream` answer, read on a thread of its own; each event keeps the
    moment it arrived (`received`, time.monotonic()). `last_event_id` is what a client that follows
    the SSE specification comes back with: the last id the stream set, with data or without."""

    def __init__(self, connection, path, token=None):
        self.events, self.comments, self.status, self.closed = [], 0, None, False
        self.last_event_id = None
        self.connection = connection
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.connection.request("GET", path, headers=headers)
        response = self.connection.getresponse()
        self.status, self.content_type = response.status, response.getheader("Content-Type", "")
        self.thread = threading.Thread(target=self.read, args=(response,), daemon=True)
        self.thread.start()

    def read(self, response):
        event = {}
        try:
            while True:
                line = response.readline()  # through the chunked framing, which may split a line
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line.startswith(":"):
                    self.comments += 1
                elif line == "":
                    self.last_event_id = event.get("id", self.last_event_id)
                    if "data" in event:
                        event["received"] = time.monotonic()
                        self.events.append(event)
                    event = {}
                else:
                    field, _, value = line.partition(":")
                    event[field] = value[1:] if value.startswith(" ") else value
        except (OSError, ValueError, AttributeError):
            # AttributeError: close() on another thread tears http.client's reader down under it.
            pass
        self.closed = True

    def notifications(self):
        return [json.loads(e["data"]) for e in self.events if e.get("event") == "notification"]

    def close(self):
        try:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()
