#!/usr/bin/env bash
# Model-checks the claim protocol (model/claim.pml, docs/design.md section 3) with spin.
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

if [ -n "${MODEL_TRAIL_DIR:-}" ]; then MODEL_TRAIL_DIR=$(realpath -m "$MODEL_TRAIL_DIR"); fi
work=$(mktemp -d "${TMPDIR:-/tmp}/model-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name | expect (holds/fails) | mode (safety/liveness) | ltl property | spin -D flags
# The longest search comes first. Counterexample runs use -DNOSYM so that the trail keeps its
# worker numbers.
checks=(
  "settles|holds|liveness|settles|-DLIVENESS"
  "one_live_claim|holds|safety|one_live_claim|"
  "holder_writes|holds|safety|holder_writes|"
  "final_is_final|holds|safety|final_is_final|"
  "money_once|holds|safety|money_once|"
  "payload_match|holds|safety|payload_match|"
  "ack_after_final|holds|safety|ack_after_final|"
  "witness:debit_retried|fails|safety|single_attempt|-DNOSYM"
  "broken:no_token_fence|fails|safety|holder_writes|-DBROKEN_NO_TOKEN_FENCE -DNOSYM"
  "broken:no_lease_arm|fails|liveness|settles|-DLIVENESS -DBROKEN_NO_LEASE_ARM -DNOSYM"
  "broken:no_payload_check|fails|safety|payload_match|-DBROKEN_NO_PAYLOAD_CHECK -DNOSYM"
  "broken:ack_in_progress|fails|safety|ack_after_final|-DBROKEN_ACK_IN_PROGRESS -DNOSYM"
  "broken:lease_le|fails|safety|one_live_claim|-DBROKEN_LEASE_LE -DNOSYM"
  "broken:claim_any_state|fails|safety|final_is_final|-DBROKEN_CLAIM_ANY_STATE -DNOSYM"
  "broken:bank_no_dedupe|fails|safety|money_once|-DBROKEN_BANK_NO_DEDUPE -DNOSYM"
)

# The pan flags of a check: safety runs stop at a reached violation of the never claim,
# expected counterexamples are searched breadth-first (shortest trail), liveness searches for
# acceptance cycles under weak fairness.
cflags_of() { # mode expect
  local flags="-O2 -w -DMEMLIM=$memlim_mb"
  if [ "$1" = liveness ]; then
    echo "$flags"
  elif [ "$2" = fails ]; then
    echo "$flags -DSAFETY -DBFS"
  else
    echo "$flags -DSAFETY"
  fi
}

# Checks that share spin -D flags and compiler flags share one pan binary.
declare -A build_of=()
builds=()
for idx in "${!checks[@]}"; do
  IFS='|' read -r _ expect mode _ defs <<<"${checks[$idx]}"
  key="$defs|$(cflags_of "$mode" "$expect")"
  if [ -z "${build_of[$key]:-}" ]; then
    build_of[$key]=${#builds[@]}
    builds+=("$key")
  fi
done

compile() { # build index
  local dir="$work/build$1" defs cflags
  IFS='|' read -r defs cflags <<<"${builds[$1]}"
  mkdir -p "$dir" && cd "$dir"
  cp "$model" claim.pml
  # shellcheck disable=SC2086 # flag lists
  if ! spin $defs -a claim.pml >spin.out 2>&1 || ! gcc $cflags -o pan pan.c >gcc.out 2>&1; then
    echo "FAIL build [$defs] [$cflags]" >failed
    cat spin.out gcc.out >>failed 2>/dev/null || true
  fi
}

# Runs one check in its own directory and writes its verdict line to $dir/result.
run_check() {
  local idx=$1 name expect mode prop defs
  IFS='|' read -r name expect mode prop defs <<<"${checks[$idx]}"
  local build="$work/build${build_of[$defs|$(cflags_of "$mode" "$expect")]}" dir="$work/check$idx"
  mkdir -p "$dir" && cd "$dir"
  if [ -f "$build/failed" ]; then
    { printf 'FAIL %-26s ' "$name"; cat "$build/failed"; } >result
    return
  fi
  cp "$build/pan" "$build/claim.pml" .
  local run=(-m"$depth_limit" -w26 -N "$prop")
  [ "$mode" = liveness ] && run+=(-a -f) # acceptance cycles under weak fairness
  ./pan "${run[@]}" >pan.out 2>&1 || true

  local errors states depth secs vector figures
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -1)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.out | tail -1)
  secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' pan.out | tail -1)
  vector=$(sed -n 's/^State-vector \([0-9]*\) byte.*/\1/p' pan.out | tail -1)
  figures=$(printf 'states %9s  depth %6s  vector %3sB  %6ss' "${states:-?}" "${depth:-?}" \
    "${vector:-?}" "${secs:-?}")
  if [ -z "$errors" ]; then
    { printf 'FAIL %-26s pan gave no verdict\n' "$name"; tail -20 pan.out; } >result
  elif [ "$expect" = holds ]; then
    if [ "$errors" != 0 ]; then
      printf 'FAIL %-26s VIOLATED   %s\n' "$name" "$figures" >result
      # shellcheck disable=SC2086
      spin $defs -t claim.pml 2>&1 | grep -E 'MSC:|violated|CYCLE' >>result || true
    elif grep -qE 'Search not completed|max search depth too small|MEMLIM|out of memory' pan.out; then
      { printf 'FAIL %-26s incomplete %s\n' "$name" "$figures"
        grep -E 'Search not completed|max search depth|MEMLIM|out of memory' pan.out; } >result
    else
      printf 'ok   %-26s holds      %s\n' "$name" "$figures" >result
    fi
  elif [ "$errors" = 0 ]; then
    printf 'FAIL %-26s NOT caught %s\n' "$name" "$figures" >result
  else
    # shellcheck disable=SC2086
    spin $defs -t claim.pml >trail.txt 2>&1 || true
    printf 'ok   %-26s caught     %s  trail %s steps\n' "$name" "$figures" \
      "$(grep -c 'MSC:' trail.txt || true)" >result
    if [ -n "${MODEL_TRAIL_DIR:-}" ]; then
      mkdir -p "$MODEL_TRAIL_DIR"
      { echo "# $name: ltl $prop violated (spin $defs)"; grep -E 'MSC:|violated|CYCLE' trail.txt; } \
        >"$MODEL_TRAIL_DIR/${name//:/_}.txt"
    fi
  fi
}

# Runs `$1 <index>` for indices 0..$2-1, at most $jobs at a time.
in_parallel() {
  local running=0 i
  for ((i = 0; i < $2; i++)); do
    ("$1" "$i") &
    running=$((running + 1))
    if ((running >= jobs)); then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait
}

start=$SECONDS
echo "model-check: spin $(spin -V | sed -n 's/Spin Version \([^ ]*\).*/\1/p'), ${#builds[@]} builds, $jobs in parallel"
in_parallel compile "${#builds[@]}"
in_parallel run_check "${#checks[@]}"

status=0
for idx in "${!checks[@]}"; do
  cat "$work/check$idx/result"
  grep -q '^FAIL' "$work/check$idx/result" && status=1
done
echo "model-check: $((SECONDS - start))s wall total, $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
