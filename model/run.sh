#!/usr/bin/env bash
# Model-checks the claim protocol (model/claim.pml, docs/design.md section 3) with spin: the first
# model, then the extended one (-DEXT: heartbeat, clock skew, re-checks, shutdown, operator
# reopen and redrive). Every property of the correct model must hold with a complete exhaustive
# search, every broken variant and every witness must be caught. Prints one table row per check:
# states stored, depth reached, state vector, pan's CPU seconds, trail length.
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
# The longest searches come first. Counterexample runs use -DNOSYM so that the trail keeps its
# worker numbers. Extended checks (ext:, and the variants that need -DEXT): what each
# configuration contains and why it suffices is in docs/model-check.md, "Extended model".
checks=(
  "settles|holds|liveness|settles|-DLIVENESS"
  "ext:settles|holds|liveness|settles|-DEXT -DNO_OPERATOR -DLIVENESS"
  "ext:one_live_claim:skew1|holds|safety|one_live_claim|-DEXT -DSKEW=1 -DHBLATE=0 -DNO_OPERATOR"
  "ext:settles:skew1+operator|holds|liveness|settles|-DEXT -DSKEW=1 -DNW=2 -DLIVENESS"
  "ext:one_live_claim:skew0|holds|safety|one_live_claim|-DEXT"
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
  "horizon:money_once|holds|safety|money_once|-DHORIZON"
  "horizon:final_is_final|holds|safety|final_is_final|-DHORIZON"
  "broken:horizon_no_guard|fails|safety|money_once|-DHORIZON -DBROKEN_NO_HORIZON_GUARD -DNOSYM"
  "ext:one_live_claim:L4:skew2|holds|safety|one_live_claim|-DEXT -DLTICKS=4 -DSKEW=2 -DHBLATE=0 -DNW=2"
  "ext:one_live_claim:L4:skew1+late1|holds|safety|one_live_claim|-DEXT -DLTICKS=4 -DSKEW=1 -DHBLATE=1 -DNW=2"
  "ext:holder_writes|holds|safety|holder_writes|-DEXT -DANYCLOCK"
  "ext:final_is_final|holds|safety|final_is_final|-DEXT -DANYCLOCK"
  "ext:money_once|holds|safety|money_once|-DEXT -DANYCLOCK"
  "ext:payload_match|holds|safety|payload_match|-DEXT -DANYCLOCK"
  "ext:ack_after_final|holds|safety|ack_after_final|-DEXT -DANYCLOCK"
  "witness:reopen_orphan|fails|safety|no_orphan|-DEXT -DANYCLOCK -DNW=2 -DNOSYM"
  "broken:extend_no_token|fails|safety|one_live_claim|-DEXT -DBROKEN_EXTEND_NO_TOKEN -DNW=2 -DNOSYM"
  "broken:ack_recheck|fails|safety|ack_after_final|-DEXT -DANYCLOCK -DBROKEN_ACK_RECHECK -DNW=2 -DNOSYM"
  "broken:reopen_any_state|fails|safety|final_is_final|-DEXT -DANYCLOCK -DBROKEN_REOPEN_ANY_STATE -DNW=2 -DNOSYM"
  "broken:skew_beyond_bound|fails|safety|one_live_claim|-DEXT -DSKEW=2 -DHBLATE=0 -DNW=2 -DNOSYM"
  "broken:skew_late_heartbeat|fails|safety|one_live_claim|-DEXT -DSKEW=1 -DHBLATE=1 -DNW=2 -DNOSYM"
  "broken:L4:skew_beyond_bound|fails|safety|one_live_claim|-DEXT -DLTICKS=4 -DSKEW=3 -DHBLATE=0 -DNW=2 -DNOSYM"
  "broken:L4:skew_late_heartbeat|fails|safety|one_live_claim|-DEXT -DLTICKS=4 -DSKEW=2 -DHBLATE=1 -DNW=2 -DNOSYM"
)

# The pan flags of a check: safety runs stop at a reached violation of the never claim,
# expected counterexamples are searched breadth-first (shortest trail), liveness searches for
# acceptance cycles under weak fairness. Counterexample searches are small and have a build of
# their own, so they compile without optimisation (about 1 s instead of 7-20 s; pan runs about
# twice as slow); the searches that must be exhaustive are compiled with -O2.
cflags_of() { # mode expect
  local flags="-w -DMEMLIM=$memlim_mb"
  if [ "$1" = liveness ]; then
    echo "-O2 $flags"
  elif [ "$2" = fails ]; then
    echo "-O0 $flags -DSAFETY -DBFS"
  else
    echo "-O2 $flags -DSAFETY"
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
  echo 0 >seconds
  if [ -f "$build/failed" ]; then
    { printf 'FAIL | %-34s | ' "$name"; cat "$build/failed"; } >result
    return
  fi
  cp "$build/pan" "$build/claim.pml" .
  local run=(-m"$depth_limit" -w26 -N "$prop")
  [ "$mode" = liveness ] && run+=(-a -f) # acceptance cycles under weak fairness
  # pan's CPU time (user + sys): elapsed time says little on a machine shared with other builds
  local TIMEFORMAT='%U %S'
  { time ./pan "${run[@]}" >pan.out 2>&1 || true; } 2>cpu.out

  local errors states depth secs vector figures
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | tail -1)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.out | tail -1)
  secs=$(awk '{ printf "%.1f", $1 + $2 }' cpu.out)
  vector=$(sed -n 's/^State-vector \([0-9]*\) byte.*/\1/p' pan.out | tail -1)
  echo "${secs:-0}" >seconds
  figures=$(printf '| %9s | %7s | %4s | %7s' "${states:-?}" "${depth:-?}" "${vector:-?}" \
    "${secs:-?}")
  if [ -z "$errors" ]; then
    { printf 'FAIL | %-34s | no verdict |\n' "$name"; tail -20 pan.out; } >result
  elif [ "$expect" = holds ]; then
    if [ "$errors" != 0 ]; then
      printf 'FAIL | %-34s | VIOLATED   %s |\n' "$name" "$figures" >result
      # shellcheck disable=SC2086
      spin $defs -t claim.pml 2>&1 | grep -E 'MSC:|violated|CYCLE' >>result || true
    elif grep -qE 'Search not completed|max search depth too small|MEMLIM|out of memory' pan.out; then
      { printf 'FAIL | %-34s | incomplete %s |\n' "$name" "$figures"
        grep -E 'Search not completed|max search depth|MEMLIM|out of memory' pan.out; } >result
    else
      printf 'ok   | %-34s | holds      %s |\n' "$name" "$figures" >result
    fi
  elif [ "$errors" = 0 ]; then
    printf 'FAIL | %-34s | NOT caught %s |\n' "$name" "$figures" >result
  else
    # shellcheck disable=SC2086
    spin $defs -t claim.pml >trail.txt 2>&1 || true
    printf 'ok   | %-34s | caught     %s | %s\n' "$name" "$figures" \
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
printf '%-4s | %-34s | %-10s | %9s | %7s | %4s | %7s | %s\n' '' check result states depth \
  vec 'cpu s' 'trail steps'
for idx in "${!checks[@]}"; do
  cat "$work/check$idx/result"
  grep -q '^FAIL' "$work/check$idx/result" && status=1
done
pan_total=$(cat "$work"/check*/seconds | awk '{ s += $1 } END { printf "%.0f", s }')
echo "model-check: ${#checks[@]} checks, $((SECONDS - start))s wall in total (builds included)," \
  "pan ${pan_total}s CPU, $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
