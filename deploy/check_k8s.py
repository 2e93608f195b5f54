"""Checks deploy/k8s without a cluster: both overlays render (kubectl kustomize), every
built-in kind is valid for Kubernetes 1.31 (kubernetes-validate, offline), the policy holds
(checkov: non-root, no privilege escalation, limits and requests, probes, a read-only root,
pinned images, network policies), and the manifests agree with the rest of the project the
way deploy/check_compose.py holds docker-compose.yml to it: every service Package.swift
declares runs with the environment docker-compose gives it, its own database, port 8080,
probes on routes every service serves, the topics deploy/up.sh creates, and the gateway's
configuration as deploy/nginx has it, which nginx accepts and runs with: in front of headless
Services (a fake of the cluster's DNS, dnslib), a read sent to a dead pod is answered by
another. And the import Job (jobs/import.yaml) with each overlay. Ends with `N passed, M failed`.

    .deps/k8s-tools/bin/python deploy/check_k8s.py   (deploy/test.sh runs it; install.sh installs the tools)
"""
import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer

import yaml
from dnslib import QTYPE, RCODE, RR, A
from dnslib.server import BaseResolver, DNSLogger, DNSServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postly_suite import ROOT  # noqa: E402
from postly_suite.checks import Checks  # noqa: E402
from postly_suite.fake_services import handler_for  # noqa: E402
from postly_suite.suite import declared_services, free_port, postgres_settings  # noqa: E402

K8S = os.path.join(ROOT, "deploy", "k8s")
TOOLS = os.path.join(ROOT, ".deps", "k8s-tools", "bin")
OVERLAYS = ["single-node", "ha"]
# What the spec's section 7 asks of each overlay: replicas of every service (posts and search
# more), PostgreSQL instances, and each Kafka topic's replicas and min.insync.replicas.
SCALE = {
    "single-node": {"replicas": 1, "more": {}, "instances": 1, "topic_replicas": 1, "min_insync": 1},
    "ha": {"replicas": 2, "more": {"posts": 3, "search": 3}, "instances": 3, "topic_replicas": 3, "min_insync": 2},
}
# A service's shutdown: the preStop pause (endpoints drain), then up to 30 s of the Kafka
# flush and the HTTP drain, all within the grace period.
SHUTDOWN_SECONDS = 30
SERVICE_UID = 10001  # deploy/Dockerfile's user
IMPORT_JOB = os.path.join(K8S, "jobs", "import.yaml")
# The policy, pinned: which checkov checks every workload must pass.
POLICY = {
    "CKV_K8S_8": "liveness probe", "CKV_K8S_9": "readiness probe",
    "CKV_K8S_10": "CPU requests", "CKV_K8S_11": "CPU limits", "CKV_K8S_12": "memory requests", "CKV_K8S_13": "memory limits",
    "CKV_K8S_14": "image tag pinned, not latest", "CKV_K8S_16": "not privileged", "CKV_K8S_20": "no privilege escalation",
    "CKV_K8S_22": "read-only root filesystem", "CKV_K8S_23": "not root", "CKV_K8S_28": "no NET_RAW",
    "CKV_K8S_31": "seccomp profile", "CKV_K8S_37": "capabilities dropped", "CKV_K8S_38": "no service account token",
    "CKV2_K8S_6": "a network policy",
}

check = Checks()


def render(overlay):
    result = subprocess.run(["kubectl", "kustomize", os.path.join(K8S, "overlays", overlay)], capture_output=True, text=True)
    # kustomize 5 warns about the fields kustomize 2 needs (`bases`): not failures.
    errors = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("# Warning")]
    check(f"{overlay}: renders with kubectl kustomize", result.returncode == 0 and not errors, result.stderr[-500:])
    return result.stdout if result.returncode == 0 else ""


def compose_environment():
    with open(os.path.join(ROOT, "docker-compose.yml")) as f:
        return set(yaml.safe_load(f)["x-postly-environment"])


def ops_routes():
    """The paths of the operations routes every service serves (the shared OpenAPI part)."""
    text = open(os.path.join(ROOT, "Shared", "PostlyService", "OpenAPIComponents.swift")).read()
    return set(re.findall(r'"(/(?:health/[a-z]+|metrics|openapi\.json))"', text))


def up_topics():
    text = open(os.path.join(ROOT, "deploy", "up.sh")).read()
    topics = set(re.findall(r"\bpostly\.[a-z]+\b", text))
    partitions = set(re.findall(r"--partitions (\d+)", text))
    return topics, partitions


@contextlib.contextmanager
def assembled_gateway(config_files, resolver, service_port=8080, listen=8080):
    """A folder with the gateway ConfigMap's files as the pod assembles them, `resolver`
    standing in for the pod's nameserver; for a gateway that runs here, `listen` and
    `service_port` replace the cluster's 8080 (where it listens, where each service does)."""
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, "temp"))
        for name, text in config_files.items():
            if name == "postly-upstreams.conf":
                text = text.replace("listen 8080;", f"listen 127.0.0.1:{listen};").replace(":8080;", f":{service_port};")
            if not name.endswith(".sh"):
                open(os.path.join(folder, name), "w").write(text)
        # What the pod's first container writes: the limits from their defaults.
        subprocess.run(["sh", "-c", config_files.get("limits.sh", ""), "limits.sh", folder], check=True, env={"PATH": os.environ["PATH"]})
        open(os.path.join(folder, "postly-resolver.conf"), "w").write(f"resolver {resolver} valid=5s ipv6=off;\n")
        open(os.path.join(folder, "postly-cors-origins.conf"), "w").write("default 0;\n")
        temp = os.path.join(folder, "temp")
        open(os.path.join(folder, "nginx.conf"), "w").write(f"""
pid {folder}/nginx.pid;
error_log {folder}/error.log;
events {{}}
http {{
    access_log off;
    client_body_temp_path {temp}; proxy_temp_path {temp}; fastcgi_temp_path {temp}; uwsgi_temp_path {temp}; scgi_temp_path {temp};
    include {folder}/postly.conf;
}}
""")
        yield folder


def nginx(folder, *arguments):
    """nginx on the assembled folder; its output is in the folder's error.log (a master that
    detaches would hold a captured output open)."""
    return subprocess.run(["nginx", "-p", folder, "-e", os.path.join(folder, "error.log"), "-c", os.path.join(folder, "nginx.conf"), *arguments],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def nginx_accepts(config_files):
    """nginx -t on the gateway ConfigMap's files, as the pod assembles them."""
    with assembled_gateway(config_files, resolver="127.0.0.1") as folder:
        result = nginx(folder, "-t")
        return result.returncode == 0, open(os.path.join(folder, "error.log")).read()[-400:]


class ClusterDNS(BaseResolver):
    """The cluster's DNS as a headless Service makes it: a Service's name is the addresses of
    its ready pods; a name without any is not found."""
    def __init__(self, pods):
        self.pods = pods

    def resolve(self, request, handler):
        reply = request.reply()
        addresses = self.pods.get(str(request.q.qname).rstrip("."), []) if request.q.qtype == QTYPE.A else []
        for address in addresses:
            reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(address), ttl=5))
        if not addresses:
            reply.header.rcode = RCODE.NXDOMAIN
        return reply


def gateway_reads(config_files):
    """The gateway as the cluster runs it, in front of headless Services: posts has two ready
    pods by the cluster's DNS, one of them dead (nothing listens; killed, its endpoint not yet
    gone): [status of each of 20 reads], [status of a read of a service without a ready pod]."""
    service_port, listen, dns_port = free_port(), free_port(), free_port()
    pod = ThreadingHTTPServer(("127.0.0.3", service_port), handler_for("posts"))
    threading.Thread(target=pod.serve_forever, daemon=True).start()
    dns = DNSServer(ClusterDNS({"posts.postly.svc.cluster.local": ["127.0.0.2", "127.0.0.3"]}), port=dns_port, address="127.0.0.1",
                    logger=DNSLogger(logf=lambda line: None))
    dns.start_thread()
    try:
        with assembled_gateway(config_files, f"127.0.0.1:{dns_port}", service_port, listen) as folder:
            if nginx(folder).returncode != 0:  # listening once it returns (it binds before it detaches)
                return [open(os.path.join(folder, "error.log")).read()[-400:]], None
            try:
                status = lambda path: subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{listen}{path}"],
                                                     capture_output=True, text=True).stdout
                return [status("/api/posts") for _ in range(20)], status("/api/images/search?query=sea")
            finally:
                nginx(folder, "-s", "stop")
    finally:
        dns.stop()
        pod.shutdown()


def import_job(overlay, by_kind, declared):
    """The import Job against the overlay: the image deploy/Dockerfile makes of postly-import in
    the services' version, each service it writes to a Service of the overlay, and the import
    token the services read. (The system test runs its command and environment.)"""
    pod = by_kind.get("Job", {}).get("postly-import", {}).get("spec", {}).get("template", {}).get("spec", {})
    container = (pod.get("containers") or [{}])[0]
    versions = {d["spec"]["template"]["spec"]["containers"][0]["image"].partition(":")[2] for d in by_kind.get("Deployment", {}).values()
                if d["metadata"]["name"] != "gateway"}
    check(f"{overlay}: the import Job runs deploy/Dockerfile's postly-import, the services' version",
          len(versions) == 1 and container.get("image") == f"postly-import:{versions.pop()}" and container.get("command") == ["/app/postly-import"],
          container.get("image"))
    addresses = [argument.partition("=")[2] for argument in container.get("args", []) if "=http" in argument]
    services = {f"http://{name}:{s['spec']['ports'][0]['port']}" for name, s in by_kind.get("Service", {}).items() if name in declared}
    check(f"{overlay}: the import Job writes to the services through their Services, not the gateway", addresses and set(addresses) <= services, addresses)
    token = lambda c: next((e.get("valueFrom", {}).get("secretKeyRef", {}) for e in c.get("env", []) if e["name"] == "POSTLY_IMPORT_TOKEN"), {})
    posts = by_kind.get("Deployment", {}).get("posts", {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", [{}])[0]
    check(f"{overlay}: the import Job has the services' import token", token(container) and
          (token(container)["name"], token(container)["key"]) == (token(posts).get("name"), token(posts).get("key")), token(container))


def main():
    started = time.monotonic()
    services = list(declared_services())
    environment = compose_environment()
    routes = ops_routes()
    topics, partitions = up_topics()
    rendered = {}
    job = open(IMPORT_JOB).read()
    with tempfile.TemporaryDirectory() as folder:
        for overlay in OVERLAYS:
            text = render(overlay)
            if not text:
                continue
            # The import Job is applied on its own, into a cluster an overlay made: checked with each.
            text += job
            rendered[overlay] = [document for document in yaml.safe_load_all(text) if document]
            path = os.path.join(folder, f"{overlay}.yaml")
            open(path, "w").write(text)
            validation = subprocess.run([os.path.join(TOOLS, "kubernetes-validate"), "--strict", "--quiet", "-k", "1.31.0", path],
                                        capture_output=True, text=True)
            failures = [line for line in (validation.stdout + validation.stderr).splitlines()
                        if line.strip() and "Couldn't find schema" not in line]
            check(f"{overlay}: every built-in kind is valid for Kubernetes 1.31", validation.returncode == 0 and not failures, "\n".join(failures[:10]))
        # One checkov run for both (it takes most of this script's time).
        policy = subprocess.run([os.path.join(TOOLS, "checkov"), "--framework", "kubernetes", "-d", folder, "--quiet", "--compact",
                                 "--check", ",".join(POLICY), "--output", "cli"], capture_output=True, text=True)
        failed = re.findall(r"Check: (CKV2?_K8S_\d+).*\n\s*FAILED for resource: (\S+)\n\s*File: /(\S+)\.yaml", policy.stdout)
        for overlay in rendered:
            problems = [f"{resource} fails {POLICY.get(rule, rule)}" for rule, resource, file in failed if file == overlay]
            check(f"{overlay}: policy ({', '.join(POLICY.values())})", policy.returncode == 0 and not problems,
                  ", ".join(problems[:10]) or policy.stdout[-400:])

    for overlay, documents in rendered.items():
        by_kind = {}
        for document in documents:
            by_kind.setdefault(document["kind"], {})[document["metadata"]["name"]] = document
        deployments, kube_services = by_kind.get("Deployment", {}), by_kind.get("Service", {})
        config_maps = by_kind.get("ConfigMap", {})
        environment_map = next((c for n, c in config_maps.items() if n.startswith("postly-environment")), {"data": {}})
        for name in services:
            deployment, service = deployments.get(name), kube_services.get(name)
            check(f"{overlay}: {name} has a Deployment and a Service", deployment is not None and service is not None)
            if deployment is None or service is None:
                continue
            container = deployment["spec"]["template"]["spec"]["containers"][0]
            names = {e["name"] for e in container.get("env", [])} | set(environment_map["data"])
            check(f"{overlay}: {name} gets the environment docker-compose gives it", environment <= names, sorted(environment - names))
            database = next((e.get("value") for e in container.get("env", []) if e["name"] == "POSTGRES_DATABASE"), None)
            check(f"{overlay}: {name} uses its own database", database == f"postly_{name}", database)
            credentials = {e["name"]: e.get("valueFrom", {}).get("secretKeyRef", {}).get("name") for e in container.get("env", [])
                           if e["name"] in ("POSTGRES_USER", "POSTGRES_PASSWORD")}
            owner = next((d["spec"].get("owner") for d in by_kind.get("Database", {}).values() if d["spec"]["name"] == f"postly_{name}"), None)
            roles = {r["name"]: r for r in by_kind.get("Cluster", {}).get("postly-db", {}).get("spec", {}).get("managed", {}).get("roles", [])}
            role = roles.get(f"postly_{name}", {})
            check(f"{overlay}: {name} signs in to PostgreSQL as its own role, its database's owner, and no other service's",
                  set(credentials.values()) == {f"postly-db-{name}"} and len(credentials) == 2 and owner == f"postly_{name}"
                  and role.get("login") and role.get("passwordSecret", {}).get("name") == f"postly-db-{name}", (credentials, owner, role))
            ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
            target = service["spec"]["ports"][0]["targetPort"]
            check(f"{overlay}: {name} listens on 8080, where its Service sends",
                  ports.get("http") == 8080 and environment_map["data"].get("PORT") == "8080" and ports.get(target, target) == 8080)
            probes = {kind: container.get(kind, {}).get("httpGet", {}).get("path") for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
            check(f"{overlay}: {name}'s probes ask routes every service serves", set(probes.values()) <= routes, probes)
            check(f"{overlay}: {name} is ready while its database is (/health/serving, not the broker's /health/ready)",
                  probes["readinessProbe"] == "/health/serving")
            pod = deployment["spec"]["template"]["spec"]
            pause = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
            grace = pod.get("terminationGracePeriodSeconds", 30)
            check(f"{overlay}: {name} drains its endpoints, then its {SHUTDOWN_SECONDS} s of shutdown, within its grace period",
                  pause[:1] == ["sleep"] and grace >= int(pause[1]) + SHUTDOWN_SECONDS, (pause, grace))
            uid = container.get("securityContext", {}).get("runAsUser", pod.get("securityContext", {}).get("runAsUser"))
            check(f"{overlay}: {name} runs as the Dockerfile's user ({SERVICE_UID})", uid == SERVICE_UID, uid)
            scale = SCALE[overlay]
            wanted = scale["more"].get(name, scale["replicas"])
            check(f"{overlay}: {name} runs {wanted} time(s)", deployment["spec"].get("replicas", 1) == wanted, deployment["spec"].get("replicas"))
            if wanted > 1:
                check(f"{overlay}: {name} has an autoscaler", any(
                    a["spec"]["scaleTargetRef"]["name"] == name for a in by_kind.get("HorizontalPodAutoscaler", {}).values()))
        databases = {d["spec"]["name"] for d in by_kind.get("Database", {}).values()}
        check(f"{overlay}: one CloudNativePG database per service", {f"postly_{n}" for n in services} <= databases,
              sorted({f"postly_{n}" for n in services} - databases))
        scale = SCALE[overlay]
        instances = by_kind.get("Cluster", {}).get("postly-db", {}).get("spec", {}).get("instances")
        check(f"{overlay}: PostgreSQL runs {scale['instances']} instance(s)", instances == scale["instances"], instances)
        replication = {t["spec"]["topicName"]: (t["spec"].get("replicas"), t["spec"].get("config", {}).get("min.insync.replicas"))
                       for t in by_kind.get("KafkaTopic", {}).values()}
        check(f"{overlay}: every topic has {scale['topic_replicas']} replica(s), {scale['min_insync']} in sync for a write",
              replication and set(replication.values()) == {(scale["topic_replicas"], scale["min_insync"])}, replication)
        kafka_topics = {t["spec"]["topicName"]: t["spec"]["partitions"] for t in by_kind.get("KafkaTopic", {}).values()}
        check(f"{overlay}: the topics and partitions deploy/up.sh creates", set(kafka_topics) == topics and {str(p) for p in kafka_topics.values()} == partitions,
              kafka_topics)
        parameters = by_kind.get("Cluster", {}).get("postly-db", {}).get("spec", {}).get("postgresql", {}).get("parameters", {})
        missing = {name: value for name, value in postgres_settings().items() if parameters.get(name) != value}
        check(f"{overlay}: PostgreSQL gets the settings deploy/lib.sh gives its own", not missing, missing)
        pools = by_kind.get("KafkaNodePool", {})
        check(f"{overlay}: Kafka in KRaft mode, its nodes controllers and brokers",
              by_kind.get("Kafka", {}).get("postly", {}).get("metadata", {}).get("annotations", {}).get("strimzi.io/kraft") == "enabled"
              and all(set(p["spec"]["roles"]) == {"controller", "broker"} for p in pools.values()) and pools)
        gateway_conf = next((c for n, c in config_maps.items() if n.startswith("gateway-conf")), {"data": {}})["data"]
        nginx = os.path.join(ROOT, "deploy", "nginx")
        same = all(gateway_conf.get(f) == open(os.path.join(nginx, f)).read()
                   for f in ("postly.conf", "postly-headers.conf", "cors-origins.sh", "limits.sh"))
        check(f"{overlay}: the gateway's configuration is deploy/nginx's", same and gateway_conf.get("postly-upstreams.conf") == open(
            os.path.join(nginx, "postly-upstreams.k8s.conf")).read())
        upstreams = set(re.findall(r"set \$postly_([a-z]+) ([a-z]+)\.postly\.svc\.cluster\.local:8080;", gateway_conf.get("postly-upstreams.conf", "")))
        check(f"{overlay}: the gateway finds every service by its Service", {(n, n) for n in services} <= upstreams)
        accepted, detail = nginx_accepts(gateway_conf)
        check(f"{overlay}: nginx accepts the gateway's configuration", accepted, detail)
        headless = [n for n in services if kube_services.get(n, {}).get("spec", {}).get("clusterIP") != "None"]
        check(f"{overlay}: every service's Service is headless (the gateway gets each ready pod's address)", not headless, headless)
        reads, without_pods = gateway_reads(gateway_conf)
        check(f"{overlay}: a read the gateway sends to a dead pod is answered by the other (20 reads)", reads == ["200"] * 20, reads)
        check(f"{overlay}: a service without a ready pod is the gateway's 503", without_pods == "503", without_pods)
        import_job(overlay, by_kind, services)
        replicas = {n: d["spec"].get("replicas", 1) for n, d in deployments.items()}
        budgets = by_kind.get("PodDisruptionBudget", {})
        check(f"{overlay}: a disruption budget for every Deployment that runs twice or more",
              all(n in budgets for n, count in replicas.items() if count >= 2))
    print(f"(rendered, validated and checked in {time.monotonic() - started:.1f} s)")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
