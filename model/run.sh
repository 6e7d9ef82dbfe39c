#!/usr/bin/env bash
# Model-checks the claim protocol (model/claim.pml, DESIGN.md section 3) with spin.
# Every property of the correct model must hold with a complete exhaustive search, and every
# broken variant must be caught. One line per check: states stored, depth reached, seconds.
# Builds in a temporary directory that is removed on exit.
#   MODEL_JOBS=n        checks run in parallel (default 2)
#   MODEL_TRAIL_DIR=d   also write each counterexample, replayed as readable steps, into d
# Details and how to read a counterexample: docs/model-check.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
model="$root/model/claim.pml"
jobs=${MODEL_JOBS:-2}
depth_limit=3000000 # pan -m: the DFS stack; a search that hits it counts as incomplete
memlim_mb=6144      # pan stops (incomplete) rather than exhaust the machine

for tool in spin gcc; do
  command -v "$tool" >/dev/null || { echo "model-check: $tool not found (scripts/install-deps.sh)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/model-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name | expect (holds/fails) | mode (safety/liveness) | ltl property | spin -D flags
checks=(
  "one_live_claim|holds|safety|one_live_claim|"
  "holder_writes|holds|safety|holder_writes|"
  "final_is_final|holds|safety|final_is_final|"
  "money_once|holds|safety|money_once|"
  "payload_match|holds|safety|payload_match|"
  "ack_after_final|holds|safety|ack_after_final|"
  "settles|holds|liveness|settles|-DLIVENESS"
  "witness:crash_window|fails|safety|single_attempt|"
  "broken:no_token_fence|fails|safety|holder_writes|-DBROKEN_NO_TOKEN_FENCE"
  "broken:no_lease_arm|fails|liveness|settles|-DLIVENESS -DBROKEN_NO_LEASE_ARM"
  "broken:no_payload_check|fails|safety|payload_match|-DBROKEN_NO_PAYLOAD_CHECK"
  "broken:ack_in_progress|fails|safety|ack_after_final|-DBROKEN_ACK_IN_PROGRESS"
  "broken:lease_le|fails|safety|one_live_claim|-DBROKEN_LEASE_LE"
  "broken:claim_any_state|fails|safety|final_is_final|-DBROKEN_CLAIM_ANY_STATE"
  "broken:bank_no_dedupe|fails|safety|money_once|-DBROKEN_BANK_NO_DEDUPE"
)

# Runs one check in its own directory and writes its verdict line to $dir/result.
run_check() {
  local idx=$1 name expect mode prop defs
  IFS='|' read -r name expect mode prop defs <<<"${checks[$idx]}"
  local dir="$work/$idx"
  mkdir -p "$dir"
  cp "$model" "$dir/claim.pml"
  cd "$dir"
  # shellcheck disable=SC2086 # defs is a list of -D flags
  spin $defs -a claim.pml >spin.out 2>&1 || { echo "FAIL $name: spin -a failed" >result; cat spin.out >>result; return; }
  local cflags=(-O2 -w "-DMEMLIM=$memlim_mb") run=(-m"$depth_limit" -w26 -N "$prop")
  if [ "$mode" = liveness ]; then
    run+=(-a -f) # acceptance cycles under weak fairness
  elif [ "$expect" = fails ]; then
    cflags+=(-DSAFETY -DBFS) # breadth-first: the shortest counterexample
  else
    cflags+=(-DSAFETY)
  fi
  gcc "${cflags[@]}" -o pan pan.c >gcc.out 2>&1 || { echo "FAIL $name: gcc failed" >result; cat gcc.out >>result; return; }
  ./pan "${run[@]}" >pan.out 2>&1 || true

  local errors states depth secs
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -1)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.out | tail -1)
  secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' pan.out | tail -1)
  local figures
  figures=$(printf 'states %10s  depth %7s  %6ss' "${states:-?}" "${depth:-?}" "${secs:-?}")
  if [ -z "$errors" ]; then
    printf 'FAIL %-26s pan gave no verdict\n' "$name" >result
    tail -20 pan.out >>result
  elif [ "$expect" = holds ]; then
    if [ "$errors" != 0 ]; then
      printf 'FAIL %-26s VIOLATED  %s\n' "$name" "$figures" >result
      spin $defs -t -N "$prop" claim.pml 2>&1 | grep -E 'MSC:|violated|cycle' >>result || true
    elif grep -qE 'Search not completed|max search depth too small|MEMLIM|out of memory' pan.out; then
      printf 'FAIL %-26s search incomplete  %s\n' "$name" "$figures" >result
      grep -E 'Search not completed|max search depth|MEMLIM|out of memory' pan.out >>result
    else
      printf 'ok   %-26s holds     %s\n' "$name" "$figures" >result
    fi
  else
    if [ "$errors" = 0 ]; then
      printf 'FAIL %-26s NOT caught %s\n' "$name" "$figures" >result
    else
      local steps
      # shellcheck disable=SC2086
      spin $defs -t -N "$prop" claim.pml >trail.txt 2>&1 || true
      steps=$(grep -c 'MSC:' trail.txt || true)
      printf 'ok   %-26s caught    %s  counterexample %s steps\n' "$name" "$figures" "$steps" >result
      if [ -n "${MODEL_TRAIL_DIR:-}" ]; then
        mkdir -p "$MODEL_TRAIL_DIR"
        { echo "# $name: $prop violated ($defs)"; grep -E 'MSC:|violated|CYCLE' trail.txt; } \
          >"$MODEL_TRAIL_DIR/${name//:/_}.txt"
      fi
    fi
  fi
}

start=$SECONDS
echo "model-check: spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p'), $jobs parallel, model/claim.pml"
running=0
for idx in "${!checks[@]}"; do
  (run_check "$idx") &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

status=0
for idx in "${!checks[@]}"; do
  cat "$work/$idx/result"
  grep -q '^FAIL' "$work/$idx/result" && status=1
done
echo "model-check: $((SECONDS - start))s total, $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
