#!/usr/bin/env bash
# Installs on a fresh Debian 12 machine what a make target needs, by group, and only that:
#
#   scripts/install-deps.sh GROUP...      (each target's deps-GROUP; make deps: every group)
#
#   demo     the build toolchain, the libraries charge-recovery links, and .venv with
#            requirements/demo.txt (moto's SQS and DynamoDB server, boto3): make demo
#   test     demo + GoogleTest, rapidcheck, spin, the emulators (Java + ElasticMQ's jars, Node +
#            dynalite), gdb (thread stacks of a hung consumer in a failure report), Go (builds
#            kubeconform, fetches KEDA's CRDs), systemd-analyze, promtool (.tools/bin, unpacked
#            from Debian's prometheus package), requirements/test.txt: make test, build
#   tsan     demo + GoogleTest, rapidcheck: make tsan-test
#   clang    demo + GoogleTest, rapidcheck, clang-16, its sanitizer and libFuzzer runtimes,
#            clang-tidy-16: make clang-check, asan-test, fuzz, tidy
#   format   clang-format: make format, format-check
#   release  demo + google-benchmark, libmicrohttpd (the bench's servers): make release-build
#   bench    release + the emulators, valgrind (callgrind), strace, requirements/plots.txt and
#            test.txt (bench/tests): make bench, bench-smoke, bench-compare
#   chaos    test + libfaketime, requirements/plots.txt: make chaos
#   image    demo + umoci, requirements/image.txt (syft): make image
#
# Idempotent: apt-get runs only when a package is missing, pip only when a requirements file
# changed, Maven, npm and the promtool unpacking only when their pins or versions changed.
# Nothing a target installs may start or enable a service: before installing, every package new
# to the machine is refused if its maintainer scripts would (refuse_services below).
set -euo pipefail
cd "$(dirname "$0")/.."
# One at a time (make -j, CI's background compile): held on this script until it exits.
exec 9<scripts/install-deps.sh
flock 9

apt=()          # Debian packages
requirements=() # requirements/<name>.txt into .venv
emulators=0 promtool=0

add_group() {
  case $1 in
    demo)
      apt+=(build-essential cmake ninja-build pkg-config libcurl4-openssl-dev libssl-dev
            nlohmann-json3-dev libfmt-dev libcli11-dev libcpp-httplib-dev libexpat1-dev
            zlib1g-dev python3-venv)
      requirements+=(demo) ;;
    test-libraries) apt+=(libgtest-dev libgmock-dev librapidcheck-dev) ;;
    emulators)
      apt+=(openjdk-17-jre-headless maven nodejs)
      # Debian's nodejs comes without npm; other builds of nodejs (e.g. NodeSource's) carry their own.
      command -v npm >/dev/null || apt+=(npm)
      emulators=1 ;;
    test)
      add_group demo && add_group test-libraries && add_group emulators
      # systemd: systemd-analyze (on Debian 12 the init, so already there); ca-certificates: Go's
      # downloads from the module proxy.
      apt+=(spin gdb golang-go systemd ca-certificates)
      promtool=1
      requirements+=(test) ;;
    tsan) add_group demo && add_group test-libraries ;;
    clang)
      add_group demo && add_group test-libraries
      apt+=(clang-16 libclang-rt-16-dev clang-tidy-16) ;;
    format) apt+=(clang-format) ;;
    release)
      add_group demo
      apt+=(libbenchmark-dev libmicrohttpd-dev) ;;
    bench)
      add_group release && add_group emulators
      # strace: the production runs' system calls per charge; pytest: bench/tests.
      apt+=(valgrind strace)
      requirements+=(plots test) ;;
    chaos)
      add_group test
      apt+=(faketime)
      requirements+=(plots) ;;
    image)
      add_group demo
      apt+=(umoci)
      requirements+=(image) ;;
    *) echo "install-deps: unknown group '$1' (demo test tsan clang format release bench chaos image)" >&2
       exit 2 ;;
  esac
}
(($#)) || { echo "usage: scripts/install-deps.sh GROUP... (see its header)" >&2; exit 2; }
for group in "$@"; do add_group "$group"; done

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
apt_get() { DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get "$@"; }

# A package that would enable or start a service on the user's machine is refused before anything
# is installed: debhelper's maintainer-script snippets for units and init scripts call
# deb-systemd-helper, deb-systemd-invoke, update-rc.d or invoke-rc.d (Debian's prometheus
# package, for one, enables and starts its server). Only packages new to the machine count:
# an upgrade that apt pulls in to match a -dev package's version restarts what already ran.
refuse_services() {
  local line name version arch deb scripts offenders=()
  apt_get install -y -qq --no-install-recommends --download-only "$@" >/dev/null
  while read -r line; do
    # Inst NAME (VERSION ARCHIVE [ARCH]) ...; an upgrade has "[OLD-VERSION]" before the parenthesis.
    read -r _ name version _ <<<"$line"
    [ "${version:0:1}" = "(" ] || continue
    version=${version#(}
    arch=$(sed -n 's/^[^(]*([^)]*\[\([a-z0-9]*\)\]).*/\1/p' <<<"$line")
    deb=/var/cache/apt/archives/${name}_${version//:/%3a}_${arch}.deb
    [ -f "$deb" ] || { echo "install-deps: $deb not downloaded; cannot check $name" >&2; exit 1; }
    # tar fails when a package has no preinst or no postinst: what it found is still printed.
    scripts=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO --wildcards '*preinst' '*postinst' 2>/dev/null || true)
    if grep -qE '^[^#]*(deb-systemd-(helper|invoke)|update-rc\.d|invoke-rc\.d)' <<<"$scripts"; then
      offenders+=("$name")
    fi
  done < <(apt-get install -s --no-install-recommends "$@" | grep '^Inst ')
  if ((${#offenders[@]})); then
    echo "install-deps: refusing to install ${offenders[*]}: its maintainer scripts enable or start a service" >&2
    exit 1
  fi
}

mapfile -t apt < <(printf '%s\n' "${apt[@]}" | sort -u)
mapfile -t missing < <(dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' "${apt[@]}" 2>/dev/null |
  awk '$1 == "ii" {print $2}' | sort | comm -23 <(printf '%s\n' "${apt[@]}") -)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  apt_get update -qq
  refuse_services "${missing[@]}"
  apt_get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Each requirements file has its stamp in .venv; the changed ones are installed by one pip run.
changed=()
for name in $(printf '%s\n' "${requirements[@]}" | sort -u); do
  [ "$(cat ".venv/.requirements-$name.sha256" 2>/dev/null)" = "$(sha256sum "requirements/$name.txt")" ] ||
    changed+=("$name")
done
if ((${#changed[@]})); then
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip
  fi
  .venv/bin/pip install -q $(printf -- '-r requirements/%s.txt ' "${changed[@]}")
  for name in "${changed[@]}"; do sha256sum "requirements/$name.txt" >".venv/.requirements-$name.sha256"; done
fi

# The other emulators of the conformance matrix and the bench: ElasticMQ's jars (Maven Central,
# tools/elasticmq/pom.xml) into build/elasticmq, dynalite (npm, tools/dynalite) into its
# node_modules. Refetched only when their pinned manifests change.
if ((emulators)); then
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
fi

# promtool (make deploy-check) without installing the prometheus package, whose maintainer
# scripts enable and start the server: the package unpacked into a scratch directory (no
# maintainer script runs) and its two Go binaries, which need only libc, kept in .tools/bin:
# promtool, and prometheus for tools/dashboard_snapshot.py, which runs it in the foreground.
# Unpacked again when Debian's version changes; Debian's version is asked only when apt's
# package lists changed since (apt-cache takes about 2 s).
stamp=.tools/bin/promtool.version
if ((promtool)) && { [ ! -x .tools/bin/promtool ] || [ /var/lib/apt/lists -nt "$stamp" ]; }; then
  candidate() { apt-cache policy prometheus 2>/dev/null | awk '$1 == "Candidate:" {print $2}'; }
  version=$(candidate)
  if [ -z "$version" ] || [ "$version" = "(none)" ]; then
    apt_get update -qq
    version=$(candidate)
  fi
  if [ ! -x .tools/bin/promtool ] || [ "$(cat "$stamp" 2>/dev/null)" != "$version" ]; then
    scratch=$(mktemp -d)
    # apt fetches as its sandbox user _apt when run as root: let it write here.
    [ "$(id -u)" -ne 0 ] || chown _apt "$scratch"
    (cd "$scratch" && apt-get download -qq "prometheus=$version")
    dpkg-deb -x "$scratch"/prometheus_*.deb "$scratch/root"
    mkdir -p .tools/bin
    install -m 755 "$scratch/root/usr/bin/promtool" "$scratch/root/usr/bin/prometheus" .tools/bin/
    rm -rf "$scratch"
  fi
  echo "$version" >"$stamp"
fi
