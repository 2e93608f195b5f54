#!/usr/bin/env python3
"""Checks docker-compose.yml without a Docker engine (none runs here): it parses, every file
it names exists, every service Package.swift declares is in it the way the pattern says
(built from deploy/Dockerfile, healthy dependencies, a healthcheck, its own database), and
each service gets the environment deploy/up.sh gives it locally. Ends with `N passed, M failed`.

    deploy/check_compose.py          (deploy/test.sh runs it)
"""
import json
import os
import re
import sys

import yaml

from postly_suite import ROOT
from postly_suite.checks import Checks
from postly_suite.suite import declared_services, postgres_settings

check = Checks()


def up_environment():
    """The variable names deploy/up.sh exports to every service."""
    text = open(os.path.join(ROOT, "deploy", "up.sh")).read()
    block = re.search(r"export (PORT=.*?)\n\s*exec ", text, re.S).group(1)
    return set(re.findall(r"\b([A-Z][A-Z_]+)=", block)) | {"LOG_LEVEL"}


def main():
    with open(os.path.join(ROOT, "docker-compose.yml")) as f:
        compose = yaml.safe_load(f)
    services = compose.get("services", {})
    check("docker-compose.yml parses", isinstance(services, dict) and services)

    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                check(f"{name}: mounted {source} exists", os.path.exists(os.path.join(ROOT, source)))
        build = service.get("build")
        if build:
            context = os.path.join(ROOT, build.get("context", "."))
            check(f"{name}: its Dockerfile exists", os.path.isfile(os.path.join(context, build.get("dockerfile", "Dockerfile"))))

    command = services.get("postgres", {}).get("command", [])
    given = dict(a.split("=", 1) for a, flag in zip(command[1:], command) if flag == "-c")
    missing = {name: value for name, value in postgres_settings().items() if given.get(name) != value}
    check("postgres: the settings deploy/lib.sh gives its PostgreSQL", not missing, missing)

    expected_environment = up_environment()
    init_databases = open(os.path.join(ROOT, "deploy", "postgres", "init-databases.sh")).read()
    gateway = open(os.path.join(ROOT, "deploy", "nginx", "postly-upstreams.compose.conf")).read()
    for name in declared_services():
        service = services.get(name)
        check(f"{name}: declared in Package.swift and in docker-compose.yml", service is not None)
        if service is None:
            continue
        check(f"{name}: built from deploy/Dockerfile as postly-{name}",
              service.get("build", {}).get("dockerfile") == "deploy/Dockerfile" and service["build"].get("args", {}).get("PRODUCT") == f"postly-{name}")
        check(f"{name}: has a healthcheck on /health/ready", "/health/ready" in json.dumps(service.get("healthcheck", {})))
        dependencies = service.get("depends_on", {})
        check(f"{name}: starts after healthy dependencies",
              isinstance(dependencies, dict) and dependencies and all(d.get("condition", "").startswith("service_") for d in dependencies.values()))
        environment = service.get("environment", {})
        missing = sorted(expected_environment - set(environment))
        check(f"{name}: gets every variable up.sh gives it", not missing, missing)
        check(f"{name}: uses its own database", environment.get("POSTGRES_DATABASE") == f"postly_{name}", environment.get("POSTGRES_DATABASE"))
        check(f"{name}: its database is created on first start", re.search(rf"\b{name}\b", init_databases) is not None)
        check(f"{name}: the gateway finds it", f"{name}:8080" in gateway)

    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
