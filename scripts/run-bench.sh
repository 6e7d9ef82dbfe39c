#!/usr/bin/env bash
# Runs every microbenchmark of the release build; figures, not assertions.
set -euo pipefail
cd "$(dirname "$0")/.."
# bench/CMakeLists.txt lists them: the load generators and servers of bench/run.py that
# share the folder are not microbenchmarks.
list=build/release/bench/microbenchmarks.txt
mapfile -t benches < <(grep -v '^$' "$list" 2>/dev/null || true)
if ((${#benches[@]} == 0)); then
  echo "no benchmarks listed in $list: run 'make release-build' first" >&2
  exit 1
fi
for bench in "${benches[@]}"; do
  echo "== $(basename "$bench")"
  "$bench" --benchmark_min_time=0.2 "$@"
done
