#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian 12 machine. Idempotent: it only
# calls apt-get when a package is missing and only rebuilds the virtualenv when the pinned
# requirements change.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config clang-format clang-16 clang-tidy-16
  libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libfmt-dev libcli11-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev spin python3-venv
  libclang-rt-16-dev)
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
