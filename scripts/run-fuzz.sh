#!/usr/bin/env bash
# Builds the fuzz targets of the clang preset (clang-16, libFuzzer + ASan/UBSan; build/clang, the
# build that make clang-check and asan-test use too) and runs every fuzz target for
# FUZZ_SECONDS (default 60), FUZZ_JOBS (default 2) at a time, then prints the executions per
# target. New inputs go to build/fuzz/corpus/<target>; the seeds in fuzz/corpus and the old
# crash inputs in fuzz/regressions are read, never written. A crash input lands in
# build/fuzz/artifacts/<target>/: fix the bug, then copy it into fuzz/regressions/<target>/ so
# the normal build's ctest replays it for good. Exits non-zero when any target failed.
#
#   FUZZ_SECONDS=600 FUZZ_TARGETS="charge_event url" scripts/run-fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-2}
read -r -a targets <<<"${FUZZ_TARGETS:-charge_event dynamodb_reply sqs_reply credentials url}"

started=$(date +%s)
cmake --preset clang >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
built=$(date +%s)

logs=build/fuzz/logs
mkdir -p "$logs"

run_target() {
  local target=$1 status=0
  mkdir -p "build/fuzz/corpus/$target" "build/fuzz/artifacts/$target"
  "build/clang/fuzz/ic_fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
    -max_len=8192 -timeout=10 -artifact_prefix="build/fuzz/artifacts/$target/" \
    "build/fuzz/corpus/$target" "fuzz/corpus/$target" "fuzz/regressions/$target" \
    >"$logs/$target.log" 2>&1 || status=$?
  echo "$status" >"$logs/$target.status"
}

rm -f "$logs"/*.status
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  run_target "$target" &
done
wait

failed=0
printf '%-16s %12s %10s %s\n' target executions exec/s result
for target in "${targets[@]}"; do
  result=ok
  [ "$(cat "$logs/$target.status" 2>/dev/null)" = 0 ] || result=FAILED
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target.log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$target.log" | tail -n1)
  printf '%-16s %12s %10s %s\n' "$target" "${runs:-?}" "${rate:-?}" "$result"
  if [ "$result" != ok ]; then
    failed=1
    echo "--- $logs/$target.log (tail) ---"
    tail -n 40 "$logs/$target.log"
    ls "build/fuzz/artifacts/$target"
  fi
done
echo "fuzz: build $((built - started)) s, runs $(($(date +%s) - built)) s, ${seconds} s per target"
exit "$failed"
