"""What the benchmarks that drive a running suite (deploy/up.sh) through its gateway share:
requests, accounts, percentiles, and stopping and restarting one service as up.sh runs it."""
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse
import uuid


class Gateway:
    def __init__(self, base):
        self.base = urllib.parse.urlsplit(base)

    def connection(self):
        return http.client.HTTPConnection(self.base.hostname, self.base.port, timeout=30)

    def call(self, method, path, body=None, token=None, patience=0):
        """One request, its JSON answer; a 503 is tried again for `patience` seconds (a post
        the comments service learns of by its event a moment after it was created)."""
        deadline = time.monotonic() + patience
        while True:
            conn = self.connection()
            headers = {"Content-Type": "application/json"}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            conn.request(method, path, json.dumps(body) if body is not None else None, headers)
            response = conn.getresponse()
            data = response.read()
            conn.close()
            if response.status != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if response.status >= 300:
            sys.exit(f"{method} {path} answered {response.status}: {data[:300]!r}")
        return json.loads(data)

    def register(self, name):
        answer = self.call("POST", "/api/auth/register",
                           {"name": name, "email": f"bench-{uuid.uuid4().hex[:12]}@example.test", "password": "bench-password"})
        return answer["accessToken"]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def process_sample(pid):
    """(CPU seconds so far, resident MiB) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return cpu, rss / 1024


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
