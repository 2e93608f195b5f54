"""The suite as deploy/up.sh runs it: brought up on free ports and down again, one of its
services stopped and started, and waiting for what it does a moment later."""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

from postly_suite import ROOT
from postly_suite.fake_pexels import FakePexels

SERVICES = ["auth", "posts", "comments", "search", "images", "notifications", "federation"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eventually(seconds, probe):
    """Calls probe until it returns something truthy; returns (value, seconds it took)."""
    started = time.monotonic()
    while True:
        value = probe()
        elapsed = time.monotonic() - started
        if value or elapsed > seconds:
            return value, elapsed
        time.sleep(0.02)


def declared_services():
    """The services Package.swift declares (its executables postly-<name>)."""
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return [p["name"][len("postly-"):] for p in json.loads(dump)["products"] if "executable" in p["type"] and p["name"].startswith("postly-")]


class Suite:
    """A suite deploy/up.sh started: the environment it was given and its fake Pexels."""

    def __init__(self, environment, pexels):
        self.environment, self.pexels = environment, pexels
        self.run_dir = environment["POSTLY_RUN_DIR"]

    def port(self, part, instance=1):
        """The port of the gateway, postgres, the broker or a service (its `instance`)."""
        if instance > 1:
            return int(self.environment[f"POSTLY_{part.upper()}_PORT_{instance}"])
        return int(self.environment[f"POSTLY_{part.upper()}_PORT"])

    @property
    def instances(self):
        return int(self.environment.get("POSTLY_INSTANCES", "1"))

    def service(self, name, instance=1):
        """Instance `instance` (1, 2, ...) of a service."""
        return RunningService(os.path.join(self.run_dir, f"{name}.pid" if instance == 1 else f"{name}-{instance}.pid"))


@contextlib.contextmanager
def running_suite(name, checks, instances=1, settings=None):
    """The whole suite, started by deploy/up.sh on free ports in a temporary run folder (removed
    afterwards when every check passed), in front of a fake Pexels that insists on its key;
    `instances` of each service behind the gateway, `settings` added to their environment."""
    with FakePexels(key=f"{name}-pexels-key-{uuid.uuid4().hex[:12]}") as pexels:
        run_dir = tempfile.mkdtemp(prefix=f"postly-{name}.")
        os.chmod(run_dir, 0o755)
        print(f"the suite's state and logs: {run_dir} (removed when every check passed)", flush=True)
        environment = dict(os.environ)
        environment.setdefault("POSTLY_BUILD_CONFIGURATION", "debug")
        for part in ["gateway", "postgres", "broker"] + SERVICES:
            environment.setdefault(f"POSTLY_{part.upper()}_PORT", str(free_port()))
        for service in SERVICES:
            for instance in range(2, instances + 1):
                environment.setdefault(f"POSTLY_{service.upper()}_PORT_{instance}", str(free_port()))
        environment["POSTLY_INSTANCES"] = str(instances)
        environment.update(settings or {})
        environment.update({"POSTLY_RUN_DIR": run_dir, "PEXELS_API_KEY": pexels.key, "PEXELS_BASE_URL": pexels.url})
        # Every request comes from loopback, which the gateway's per-address limits do not
        # exempt: room for the sign-ins the runs make (tens, some at once).
        environment.setdefault("POSTLY_GATEWAY_SIGNIN_BURST", "200")
        try:
            subprocess.run([os.path.join(ROOT, "deploy", "up.sh")], env=environment, check=True)
            yield Suite(environment, pexels)
        finally:
            subprocess.run([os.path.join(ROOT, "deploy", "down.sh"), "--quiet"], env=environment, check=False)
            if checks.failed == 0:
                shutil.rmtree(run_dir, ignore_errors=True)


def settle(client, author, reader, word, seconds):
    """Waits until every consumer has joined its group and applied a first event (a group join
    follows readiness by seconds; until then events wait in the broker), so timed checks
    measure what they mean to, not the start. `word` is in no other post. Returns the warm-up
    post, whether it settled, and the seconds it took."""
    post = client.first_post(author, f"Warm-up {word}", "warming up")
    client.call("POST", f"/api/posts/{post}/comments", reader, {"content": "first"})
    client.call("POST", f"/api/posts/{post}/like", reader)

    def settled():
        counted = client.call("GET", f"/api/posts/{post}").body.get("commentsCount") == 1
        found, _ = client.search(word)
        notified = client.call("GET", "/api/notifications", author)
        return counted and found == [post] and notified.status == 200 and len(notified.body.get("notifications", [])) == 2

    ready, took = eventually(seconds, settled)
    return post, ready, took


class RunningService:
    """One service of the suite, by the pid file up.sh wrote: stopped (SIGTERM, or SIGKILL as a
    crash) and started again with the same binary and environment, its output appended to its
    log."""

    def __init__(self, pid_file):
        self.pid_file = pid_file
        self.pid = int(open(pid_file).read())
        with open(f"/proc/{self.pid}/environ", "rb") as f:
            self.environment = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
        self.binary = os.readlink(f"/proc/{self.pid}/exe")
        self.name = os.path.basename(pid_file).removesuffix(".pid")

    def stop(self, signal=15):
        os.kill(self.pid, signal)
        while os.path.exists(f"/proc/{self.pid}") and open(f"/proc/{self.pid}/stat").read().split()[2] != "Z":
            time.sleep(0.01)

    def start(self):
        log = open(os.path.join(os.path.dirname(self.pid_file), "logs", f"{self.name}.log"), "ab")
        process = subprocess.Popen([self.binary], env=self.environment, stdout=log, stderr=log, start_new_session=True)
        self.pid = process.pid
        with open(self.pid_file, "w") as f:
            f.write(str(process.pid))
