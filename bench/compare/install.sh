#!/usr/bin/env bash
# What bench/compare/run.py needs beyond `make deps` and the release build (`make bench-compare`
# runs it), and nothing else: Debian's JDK 17 and Maven to build the Spring reference (deps
# installs only the JRE that ElasticMQ runs on; the JDK's keytool also makes --tls's trust
# store), the Powertools reference's own venv from its pinned requirements
# (build/compare/powertools-venv, not the project's .venv), and the Spring jar built by Maven from
# the versions its pom.xml pins, fetched from Maven Central
# (build/compare/spring/charge-consumer-spring.jar). Neither package starts a service.
# Idempotent: each step runs again only when its inputs changed.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || missing+=(maven)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

venv=build/compare/powertools-venv
want=$(sha256sum bench/compare/powertools/requirements.txt | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -r bench/compare/powertools/requirements.txt
  echo "$want" >"$venv/.requirements.sha256"
fi

jar=build/compare/spring/charge-consumer-spring.jar
want=$(find bench/compare/spring -type f \( -name pom.xml -o -path '*/src/*' \) -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ ! -f "$jar" ] || [ "$(cat build/compare/spring/.sources.sha256 2>/dev/null)" != "$want" ]; then
  mvn -q -B -f bench/compare/spring/pom.xml package -DskipTests
  echo "$want" >build/compare/spring/.sources.sha256
fi
