#!/usr/bin/env bash
# Builds librdkafka from Debian sid's source package (the upstream tarball as released, with
# the patches beside this script) into PREFIX, for static linking. Used by deploy/install.sh
# and by deploy/Dockerfile, so both link the same library.
#   deploy/librdkafka/build.sh PREFIX
# Needs: build-essential pkg-config libssl-dev zlib1g-dev libzstd-dev liblz4-dev
# libcurl4-openssl-dev (configure silently drops a feature whose library is missing), and a
# Debian or Ubuntu machine.
set -euo pipefail
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/librdkafka-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sources" "$work/lists/partial"

# A private apt configuration: the machine's own sources stay untouched. On Debian, the
# machine's own mirror; elsewhere (Ubuntu), Debian's, checked with Debian's archive keys.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  awk 'BEGIN{RS=""; ORS="\n\n"} NR==1' /etc/apt/sources.list.d/debian.sources \
    | sed -e 's/^Types:.*/Types: deb-src/' -e 's/^Suites:.*/Suites: sid/' >"$work/sources/sid-src.sources"
else
  [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || apt-get install -y -qq --no-install-recommends debian-archive-keyring >/dev/null
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: sid\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    >"$work/sources/sid-src.sources"
fi
apt_private=(-o APT::Sandbox::User=root -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/sources" -o "Dir::State::Lists=$work/lists")
# The upstream tarball as released: Debian's own patches move the bundled OpenTelemetry
# headers to a nanopb package that is not needed here.
download() {
  apt-get "${apt_private[@]}" update -qq && (cd "$work" && apt-get "${apt_private[@]}" source -qq --download-only librdkafka/sid >/dev/null)
}
source "$here/../retry.sh"
with_retries 4 15 download
mkdir "$work/src"
tar -xzf "$work"/librdkafka_*.orig.tar.gz -C "$work/src" --strip-components=1
# sid moves on: a release that has a patch's fix already is built without it; one the patch
# no longer fits stops the build, naming both.
tarball=$(basename "$work"/librdkafka_*.orig.tar.gz)
for patch in "$here"/*.patch; do
  if patch -d "$work/src" -p1 -N --dry-run --quiet <"$patch" >/dev/null 2>&1; then
    patch -d "$work/src" -p1 -N --quiet <"$patch"
  elif patch -d "$work/src" -p1 -R --dry-run --quiet <"$patch" >/dev/null 2>&1; then
    echo "librdkafka: $tarball has $(basename "$patch") already" >&2
  else
    echo "librdkafka: $(basename "$patch") does not fit $tarball; update it" >&2
    exit 1
  fi
done
(cd "$work/src" && ./configure --prefix="$prefix" --disable-gssapi && make -j"$(nproc)" libs && make -C src install)
# Static linking only: the binaries then run anywhere without LD_LIBRARY_PATH.
rm -f "$prefix"/lib/librdkafka.so* "$prefix"/lib/pkgconfig/rdkafka-static.pc
# What was built, so a later change of the patches builds again.
cat "$here"/*.patch | sha256sum | cut -d' ' -f1 >"$prefix/patches.sha256"
