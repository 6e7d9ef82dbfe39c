#!/usr/bin/env bash
# Runs the Python system tests against the freshly built binaries. Fixtures start (and stop)
# moto server, fake-bank and the consumer on free ports.
set -euo pipefail
cd "$(dirname "$0")/.."
export IC_BUILD_DIR="${IC_BUILD_DIR:-$PWD/build/dev}"
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests/system "$@"
