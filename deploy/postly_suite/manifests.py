"""The Kubernetes manifests (deploy/k8s) as this machine runs them: an overlay rendered with
kubectl kustomize, and for each service's Deployment as many pods as its replicas, each with
exactly the environment Kubernetes would give its container; a Job (deploy/k8s/jobs) the
same way, its volumes this machine's folders. Only the cluster's addresses
become this machine's, each checked to be the one the manifests name: a manifest that changes
an address fails here instead of running with this machine's."""
import os
import subprocess

import yaml

from postly_suite import ROOT


def render(overlay):
    """The overlay's documents, as kubectl kustomize renders them."""
    text = subprocess.run(["kubectl", "kustomize", os.path.join(ROOT, "deploy", "k8s", "overlays", overlay)],
                          check=True, capture_output=True, text=True).stdout
    return [document for document in yaml.safe_load_all(text) if document]


def pods(overlay, services, operator_settings, operator_secrets, addresses):
    """{service: [the environment of each of its pods]} for the services (Package.swift's) in
    the overlay. `operator_settings` and `operator_secrets` are what the operator makes apart:
    the ConfigMap postly-settings and the Secret postly-secrets. `addresses` maps a variable
    to (the cluster's value, this machine's), this machine's a callable of the service and the
    pod's number where it differs between pods (PORT)."""
    documents = render(overlay)
    sources = {("ConfigMap", d["metadata"]["name"]): d.get("data", {}) for d in documents if d["kind"] == "ConfigMap"}
    sources[("ConfigMap", "postly-settings")] = operator_settings
    sources[("Secret", "postly-secrets")] = operator_secrets
    # Each service's database role, whose Secret postly-db-<service> the operator makes: here the local superuser.
    for name in services:
        sources[("Secret", f"postly-db-{name}")] = {"username": "postgres", "password": ""}
    deployments = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Deployment"}
    return {name: [environment(deployments[name], number, sources, addresses) for number in range(1, deployments[name]["spec"].get("replicas", 1) + 1)]
            for name in services}


def job(path, program, operator_secrets, folders, addresses):
    """The Job in `path` (deploy/k8s/jobs) as this machine runs it: its container's command and
    arguments, and exactly its environment. `program` is this machine's build of the image's
    program, `folders` {a volume's name: this machine's folder for it}, `addresses` {an address
    in the arguments: this machine's}, each one the manifest must name."""
    document = next(d for d in yaml.safe_load_all(open(path)) if d and d["kind"] == "Job")
    pod = document["spec"]["template"]["spec"]
    container = pod["containers"][0]
    variables = container_environment(pod, container, document["metadata"]["name"], {("Secret", "postly-secrets"): operator_secrets})
    mounts = {m["mountPath"]: folders[m["name"]] for m in container.get("volumeMounts", [])}
    arguments = [program]
    for argument in container.get("args", []):
        option, equals, value = argument.partition("=")
        for mount, folder in mounts.items():
            if value.startswith(mount + "/"):
                value = folder + value[len(mount):]
        arguments.append(f"{option}={addresses.get(value, value)}" if equals else argument)
    missing = [address for address in addresses if not any(a.endswith("=" + address) for a in container.get("args", []))]
    if missing:
        raise ValueError(f"{path}: the local run expects the addresses {missing}, which the Job does not name")
    return arguments, variables


def environment(deployment, number, sources, addresses):
    """The environment of the Deployment's pod `number`, this machine's addresses in it."""
    pod = deployment["spec"]["template"]["spec"]
    pod_name = f"{deployment['metadata']['name']}-{number}"
    variables = container_environment(pod, pod["containers"][0], pod_name, sources)
    for name, (cluster, local) in addresses.items():
        if variables.get(name) != cluster:
            raise ValueError(f"{pod_name}: {name} is {variables.get(name)!r} in the manifests, where the local run expects {cluster!r}")
        variables[name] = local(deployment["metadata"]["name"], number) if callable(local) else local
    return variables


def container_environment(pod, container, pod_name, sources):
    """What Kubernetes gives the container: its envFrom, then its env."""
    if pod.get("enableServiceLinks", True):
        raise ValueError(f"{pod_name}: with service links, Kubernetes adds variables for every Service, which the local run does not")
    variables = {}
    for source in container.get("envFrom", []):
        kind, reference = ("ConfigMap", source["configMapRef"]) if "configMapRef" in source else ("Secret", source["secretRef"])
        variables.update(lookup(sources, kind, reference))
    for entry in container.get("env", []):
        value = entry.get("value") if "valueFrom" not in entry else resolve(entry["valueFrom"], sources, pod_name)
        if value is not None:
            variables[entry["name"]] = value
    return variables


def lookup(sources, kind, reference):
    """A ConfigMap's or Secret's data; an optional one that nobody made is empty."""
    data = sources.get((kind, reference["name"]))
    if data is None and not reference.get("optional"):
        raise ValueError(f"the {kind} {reference['name']} is neither in the manifests nor the operator's")
    return data or {}


def resolve(value_from, sources, pod_name):
    """One env entry's valueFrom: a key of a ConfigMap or Secret, or the pod's name."""
    if "fieldRef" in value_from:
        if value_from["fieldRef"]["fieldPath"] != "metadata.name":
            raise ValueError(f"the local run knows only metadata.name, not {value_from['fieldRef']['fieldPath']}")
        return pod_name
    kind, reference = ("ConfigMap", value_from["configMapKeyRef"]) if "configMapKeyRef" in value_from else ("Secret", value_from["secretKeyRef"])
    data = lookup(sources, kind, reference)
    if reference["key"] not in data and not reference.get("optional"):
        raise ValueError(f"the {kind} {reference['name']} has no key {reference['key']}")
    return data.get(reference["key"])
