"""The suite as deploy/up.sh runs it: brought up on free ports and down again, one of its
services stopped and started, and waiting for what it does a moment later."""
import contextlib
import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import uuid

from postly_suite import ROOT, manifests
from postly_suite.fake_pexels import FakePexels

SERVICES = ["auth", "posts", "comments", "search", "images", "notifications", "federation"]


_handed_out = set()
# The ports handed out in the last minute by any process: deploy/lib.sh starts a Python for
# each port it picks, and picks them all before binding any.
_RECENT = os.path.join(tempfile.gettempdir(), "postly-ports-handed-out")


def free_port():
    """A port nothing listens on, never one this process handed out before, nor another in the
    last minute: the kernel may give a closed socket's port to the next bind (a suite's gateway
    once got its broker's port)."""
    with open(_RECENT, "a+") as record:
        fcntl.flock(record, fcntl.LOCK_EX)
        record.seek(0)
        now = time.time()
        recent = {int(port): float(at) for port, at in (line.split() for line in record if line.strip()) if now - float(at) < 60}
        while True:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port not in _handed_out and port not in recent:
                break
        _handed_out.add(port)
        recent[port] = now
        record.seek(0)
        record.truncate()
        record.writelines(f"{port} {at}\n" for port, at in recent.items())
        return port


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


def postgres_settings():
    """The settings deploy/lib.sh gives every PostgreSQL it starts, but where it listens: what
    docker-compose.yml and the Kubernetes cluster must give theirs too."""
    text = open(os.path.join(ROOT, "deploy", "lib.sh")).read()
    options = re.search(r'local options="([^"]*)"', text).group(1)
    return {name: value for name, value in re.findall(r"-c (\w+)=(\S+)", options) if name != "listen_addresses"}


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

    def instances(self, name):
        """How many instances of the service run."""
        return int(self.environment[f"POSTLY_{name.upper()}_INSTANCES"])

    def service(self, name, instance=1):
        """Instance `instance` (1, 2, ...) of a service."""
        return RunningService(os.path.join(self.run_dir, f"{instance_name(name, instance)}.pid"))


@contextlib.contextmanager
def running_suite(name, checks, instances=1, settings=None, manifests=None):
    """The whole suite, started by deploy/up.sh on free ports in a temporary run folder (removed
    afterwards when every check passed), in front of a fake Pexels that insists on its key;
    `instances` of each service behind the gateway, `settings` added to their environment.
    With `manifests` (an overlay of deploy/k8s), each service runs as many times as its
    Deployment's replicas instead, each instance with exactly the environment its pod would
    get (manifest_pods), `settings` and the Pexels key being the operator's."""
    with FakePexels(key=f"{name}-pexels-key-{uuid.uuid4().hex[:12]}") as pexels:
        run_dir = tempfile.mkdtemp(prefix=f"postly-{name}.")
        os.chmod(run_dir, 0o755)
        print(f"the suite's state and logs: {run_dir} (removed when every check passed)", flush=True)
        settings = dict(settings or {}, PEXELS_BASE_URL=pexels.url)
        environment = dict(os.environ)
        environment.setdefault("POSTLY_BUILD_CONFIGURATION", "debug")
        environment.update({"POSTLY_RUN_DIR": run_dir, "PEXELS_API_KEY": pexels.key})
        for part in ["gateway", "postgres", "broker"]:
            environment.setdefault(f"POSTLY_{part.upper()}_PORT", str(free_port()))
        # Every request comes from loopback, which the gateway's per-address limits do not
        # exempt: room for the sign-ins the runs make (tens, some at once).
        environment.setdefault("POSTLY_GATEWAY_SIGNIN_BURST", "200")
        if manifests:
            folder = environment["POSTLY_SERVICE_ENVIRONMENTS"] = os.path.join(run_dir, "environments")
            os.makedirs(folder)
            for service, pods in manifest_pods(manifests, environment, settings).items():
                environment[f"POSTLY_{service.upper()}_INSTANCES"] = str(len(pods))
                for instance, variables in enumerate(pods, start=1):
                    with open(os.path.join(folder, f"{instance_name(service, instance)}.env"), "w") as f:
                        f.writelines(f"{key}={value}\n" for key, value in variables.items())
        else:
            environment.update(settings)
            for service in SERVICES:
                environment[f"POSTLY_{service.upper()}_INSTANCES"] = str(instances)
                for instance in range(1, instances + 1):
                    instance_port(environment, service, instance)
        try:
            subprocess.run([os.path.join(ROOT, "deploy", "up.sh")], env=environment, check=True)
            yield Suite(environment, pexels)
        finally:
            subprocess.run([os.path.join(ROOT, "deploy", "down.sh"), "--quiet"], env=environment, check=False)
            if checks.failed == 0:
                shutil.rmtree(run_dir, ignore_errors=True)


def instance_name(service, instance):
    """What names an instance's files, as deploy/lib.sh's instance_name does: posts, posts-2, ..."""
    return service if instance == 1 else f"{service}-{instance}"


def instance_port(environment, service, instance):
    """Where an instance of a service listens: POSTLY_<NAME>_PORT[_<instance>], free unless set."""
    return environment.setdefault(f"POSTLY_{service.upper()}_PORT" + (f"_{instance}" if instance > 1 else ""), str(free_port()))


def manifest_pods(overlay, environment, settings):
    """Each service's pods as the overlay configures them, at this machine's addresses: the
    suite's PostgreSQL and broker, and for the Services' names and the public address the
    gateway, which spreads requests over a service's instances as its Service would. The
    Pexels key and the import token are the operator's Secret, the other settings its
    ConfigMap."""
    gateway = f"http://127.0.0.1:{environment['POSTLY_GATEWAY_PORT']}"
    addresses = {
        "PORT": ("8080", lambda service, instance: instance_port(environment, service, instance)),
        "POSTGRES_HOST": ("postly-db-rw", "127.0.0.1"),
        "POSTGRES_PORT": ("5432", environment["POSTLY_POSTGRES_PORT"]),
        "KAFKA_BROKERS": ("postly-kafka-bootstrap:9092", f"127.0.0.1:{environment['POSTLY_BROKER_PORT']}"),
        "AUTH_JWKS_URL": ("http://auth:8080/api/auth/jwks", f"{gateway}/api/auth/jwks"),
        "POSTS_URL": ("http://posts:8080", gateway),
        "PUBLIC_BASE_URL": ("https://postly.example", gateway),
    }
    config, secrets = dict(settings), {"PEXELS_API_KEY": environment["PEXELS_API_KEY"]}
    if "POSTLY_IMPORT_TOKEN" in config:
        secrets["POSTLY_IMPORT_TOKEN"] = config.pop("POSTLY_IMPORT_TOKEN")
    return manifests.pods(overlay, SERVICES, config, secrets, addresses)


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
        while self.running():
            time.sleep(0.01)

    def running(self):
        """Whether the process is alive: neither gone nor a zombie. It may be reaped between
        any two looks at /proc, and reading its stat then fails (ENOENT or ESRCH)."""
        try:
            with open(f"/proc/{self.pid}/stat") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    def start(self):
        log = open(os.path.join(os.path.dirname(self.pid_file), "logs", f"{self.name}.log"), "ab")
        process = subprocess.Popen([self.binary], env=self.environment, stdout=log, stderr=log, start_new_session=True)
        self.pid = process.pid
        with open(self.pid_file, "w") as f:
            f.write(str(process.pid))
