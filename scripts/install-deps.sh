#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian 12 machine. Idempotent: it only
# calls apt-get when a package is missing and only rebuilds the virtualenv when the pinned
# requirements change.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config clang-format clang-16 clang-tidy-16
  libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libfmt-dev libcli11-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev spin python3-venv
  libexpat1-dev openjdk-17-jre-headless maven nodejs valgrind gdb
  faketime libclang-rt-16-dev libmicrohttpd-dev)
# Debian's nodejs comes without npm; other builds of nodejs (e.g. NodeSource's) carry their own.
command -v npm >/dev/null || packages+=(npm)
# make bench: the bench's bank serves over libmicrohttpd (libmicrohttpd-dev, in the list above);
# its production runs count the consumer's system calls with strace.
packages+=(strace)
# make deploy-check: promtool (prometheus), systemd-analyze (systemd), and Go (golang-go, 1.19 on
# Debian 12) to `go install` kubeconform and `go mod download` KEDA's CRDs.
packages+=(prometheus systemd golang-go)
# make image: umoci assembles the OCI image from the runtime rootfs (no engine, no base image).
packages+=(umoci)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.txt
  echo "$want" >"$stamp"
fi

# The other emulators of the conformance matrix and the bench: ElasticMQ's jars (Maven Central,
# tools/elasticmq/pom.xml) into build/elasticmq, dynalite (npm, tools/dynalite) into its
# node_modules. Refetched only when their pinned manifests change.
emq_want=$(sha256sum tools/elasticmq/pom.xml | cut -d' ' -f1)
if [ "$(cat build/elasticmq/.pom.sha256 2>/dev/null)" != "$emq_want" ]; then
  rm -rf build/elasticmq
  mvn -q -B -f tools/elasticmq/pom.xml dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$PWD/build/elasticmq"
  echo "$emq_want" >build/elasticmq/.pom.sha256
fi
dyn_want=$(sha256sum tools/dynalite/package-lock.json | cut -d' ' -f1)
if [ "$(cat tools/dynalite/node_modules/.lock.sha256 2>/dev/null)" != "$dyn_want" ]; then
  (cd tools/dynalite && npm ci --no-audit --no-fund --silent)
  echo "$dyn_want" >tools/dynalite/node_modules/.lock.sha256
fi
