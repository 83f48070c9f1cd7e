#!/bin/bash
# The oracle, round 31 (docs/benchmarks.md): the pilot runs at the default
# layout, one worker at the reference batch on one node of the fastest type
# (tune::pilot_layout), and measures the noise scale with its lone worker's
# noise probe (the first half of each batch's gradient beside the whole's), so
# a job the plan keeps there goes on in the pilot's launch with no restart;
# before, the pilot ran two workers on two nodes and the knee jobs of rounds
# 29-30 moved off it to one node. The held-out jobs are later jobs of their
# setup on this machine: the round first fills its profile cache with the
# quick profile `tula tune` measures (as a first job does) and the jobs read
# it (decision_oracle.py --profile-cache); round 30's profile took 7.4-8.3 s
# of each job. Histories: copies of round 30's (the same setup; its ten fill
# and ten held-out knee jobs), so no fill jobs.
# Held out, fixed before any run: small_cnn to 83% (at most 5 epochs) at
# seeds 113-117 and LeNet-5 to 86% (at most 12 epochs) at seeds 77-81, none
# run by an earlier round; (a) the default, (c) the knee and (d) the measured
# knee of rounds 29-30 (1 x emu-one at 128, AGS, as the grid trains it: the
# oracle's choice at the job's own seed) side by side in rotated order, all
# reading the averaged weights.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round31.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "$@"; }
S=(--work /tmp/tula-oracle-round31 --profile-cache)
L=(--work /tmp/tula-oracle-round31-lenet --profile-cache --model lenet5 --target 0.86 --max-epochs 12)
for d in decision_oracle_round31 decision_oracle_round31_lenet86; do
  mkdir -p "$R/$d"
  [ -f "$R/$d/history.jsonl" ] || cp "$R/${d/31/30}/history.jsonl" "$R/$d/history.jsonl"
done
# The quick profile a first job measures, cached where the round's jobs look.
for m in "small_cnn /tmp/tula-oracle-round31" "lenet5 /tmp/tula-oracle-round31-lenet"; do
  set -- $m
  mkdir -p "$2"
  TULA_CACHE_DIR="$2/cache" "$tula" profile --quick --cache --model "$1" --dataset fashion-mnist \
    --time-budget 120 --out "$2/profile.json" >"$2/profile.log" 2>&1
done
oracle "${S[@]}" --phases headline --headline-methods a,c,d --seeds 113,114,115,116,117 \
  --out "$R/decision_oracle_round31.jsonl" --tune-extra="--history $R/decision_oracle_round31/history.jsonl"
oracle "${L[@]}" --phases headline --headline-methods a,c,d --seeds 77,78,79,80,81 \
  --out "$R/decision_oracle_round31_lenet86.jsonl" \
  --tune-extra="--history $R/decision_oracle_round31_lenet86/history.jsonl"
