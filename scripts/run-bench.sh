#!/usr/bin/env bash
# Runs every microbenchmark of the release build; figures, not assertions.
set -euo pipefail
cd "$(dirname "$0")/.."
# The load generator, the bank and the dependency floor of bench/report.py live there too: not
# microbenchmarks.
mapfile -t benches < <(find build/release/bench -maxdepth 1 -type f -executable \
  ! -name ic_bench_backend_ceiling ! -name ic_bench_fast_bank ! -name ic_bench_dependency_floor | sort)
if ((${#benches[@]} == 0)); then
  echo "no benchmarks built in build/release/bench" >&2
  exit 1
fi
for bench in "${benches[@]}"; do
  echo "== $(basename "$bench")"
  "$bench" --benchmark_min_time=0.2 "$@"
done
