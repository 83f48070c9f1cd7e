#!/bin/bash
# The oracle, round 32 (docs/benchmarks.md): the cheapest objective's pilot
# on the type where its work costs least. Since round 31 the pilot is one
# worker at the reference batch with its noise probe (no two-node allreduce
# over a slow link, which made round 10's pilot on two emu-half nodes
# calibrate the step badly), so for the cheapest and a budget it runs on one
# node of the type with the least price per unit of work (emu-half), where the
# oracle's cheapest trains: a job the plan keeps there goes on in the pilot's
# launch. Round 31's cheapest jobs piloted on emu-one at 2.5x emu-half's price
# a second and paid +9.6% to +11.4% in cost against the oracle's cheapest.
# Held out, fixed before any run: `tula tune --objective cheapest` on
# small_cnn to 83% at seeds 118-120 and LeNet-5 to 86% (at most 12 epochs) at
# seeds 82-84, none run by an earlier round; three arms a seed: after (the
# tula built with the change), before (BEFORE_TULA: the tula of 691967a) and
# (d) the oracle's cheapest on rounds 30-31's grids, 1 x emu-half at 128
# (AGS, as the grid trains it), in an order rotated by seed. Later jobs of
# their setup: the profile measured once into the round's cache first, as
# round 31 did. Histories: each arm its own copy of round 31's (small_cnn:
# its cheapest jobs' history; LeNet-5: its knee jobs').
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round32.sh BEFORE_TULA   (TULA default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
after="${TULA:-$here/../build/src/tula}"
before="${1:?usage: bench/round32.sh BEFORE_TULA (the tula of 691967a)}"
run_case() {  # tula out history tune|d seed decision_oracle-arguments...
  local tula="$1" out="$2" hist="$3" arm="$4" seed="$5"; shift 5
  local extra=(--profile-cache --seeds "$seed" --out "$out")
  if [ "$arm" = d ]; then
    /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "$@" "${extra[@]}" \
      --phases headline --headline-methods d --headline-knee emu-half:1:128
  else
    /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "$@" "${extra[@]}" \
      --phases tune --objectives cheapest --tune-extra="--history $hist"
  fi
}
for model in small_cnn lenet5; do
  if [ "$model" = small_cnn ]; then
    work=/tmp/tula-oracle-round32; name=decision_oracle_round32; seeds=(118 119 120)
    source_history="$R/decision_oracle_round31_cheapest/history.jsonl"; M=()
  else
    work=/tmp/tula-oracle-round32-lenet; name=decision_oracle_round32_lenet86; seeds=(82 83 84)
    source_history="$R/decision_oracle_round31_lenet86/history.jsonl"; M=(--model lenet5 --target 0.86 --max-epochs 12)
  fi
  mkdir -p "$work" "$R/$name" "$R/${name}_before"
  for d in "$name" "${name}_before"; do
    [ -f "$R/$d/history.jsonl" ] || cp "$source_history" "$R/$d/history.jsonl"
  done
  # The quick profile a first job measures, cached where the round's jobs look.
  # The before arm works in a directory of its own with a copy of the cache.
  [ -f "$work/profile.json" ] ||
    TULA_CACHE_DIR="$work/cache" "$after" profile --quick --cache --model "$model" --dataset fashion-mnist \
      --time-budget 120 --out "$work/profile.json" >"$work/profile.log" 2>&1
  [ -d "$work-before/cache" ] || { mkdir -p "$work-before" && cp -r "$work/cache" "$work-before/cache"; }
  i=0
  for seed in "${seeds[@]}"; do
    arms=(after before d)
    arms=("${arms[@]:i}" "${arms[@]:0:i}")  # rotated by seed
    for arm in "${arms[@]}"; do
      case "$arm" in
        after)  run_case "$after" "$R/$name.jsonl" "$R/$name/history.jsonl" tune "$seed" --work "$work" "${M[@]}" ;;
        before) run_case "$before" "$R/${name}_before.jsonl" "$R/${name}_before/history.jsonl" tune "$seed" \
                  --work "$work-before" "${M[@]}" ;;
        d)      run_case "$after" "$R/$name.jsonl" "" d "$seed" --work "$work" "${M[@]}" ;;
      esac
    done
    i=$((i + 1))
  done
done
