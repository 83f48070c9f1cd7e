#!/bin/bash
# The oracle, round 33 (docs/benchmarks.md): does an evaluation every eighth
# of an epoch bring LeNet-5's time left at half within 10%? Its knee jobs take
# 30-40 s and cross at 2.5-3.75 epochs, so a quarter-epoch reading is about a
# sixth of the time left at half (round 31: median error 14.6%, two of five
# within 10%). No code change: `tula tune --eval-every-epochs 0.125` against
# the default 0.25, the tula of 1edef71.
# Held out, fixed before any run: `tula tune --objective knee` on LeNet-5 to
# 86% (at most 12 epochs) at seeds 85-89, none run by an earlier round; the
# two arms at each seed, their order alternated by seed. Later jobs of their
# setup: the quick profile measured once into the round's cache first. Each
# arm its own copy of round 31's LeNet-5 history (knee jobs at quarter-epoch
# readings, so the eighth arm's prior crossings are read at the coarser grain).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round33.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
work=/tmp/tula-oracle-round33
M=(--model lenet5 --target 0.86 --max-epochs 12 --profile-cache --phases tune --objectives knee)
mkdir -p "$work"
for d in decision_oracle_round33_quarter decision_oracle_round33_eighth; do
  mkdir -p "$R/$d"
  [ -f "$R/$d/history.jsonl" ] || cp "$R/decision_oracle_round31_lenet86/history.jsonl" "$R/$d/history.jsonl"
done
# The quick profile a first job measures, cached where the round's jobs look.
[ -f "$work/profile.json" ] ||
  TULA_CACHE_DIR="$work/cache" "$tula" profile --quick --cache --model lenet5 --dataset fashion-mnist \
    --time-budget 120 --out "$work/profile.json" >"$work/profile.log" 2>&1
arm() {  # quarter|eighth seed
  local every=0.25; [ "$1" = eighth ] && every=0.125
  /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work" --seeds "$2" \
    --out "$R/decision_oracle_round33_$1.jsonl" \
    --tune-extra="--history $R/decision_oracle_round33_$1/history.jsonl --eval-every-epochs $every"
}
for seed in 85 86 87 88 89; do
  if [ $((seed % 2)) -eq 1 ]; then arm eighth "$seed"; arm quarter "$seed"
  else arm quarter "$seed"; arm eighth "$seed"; fi
done
