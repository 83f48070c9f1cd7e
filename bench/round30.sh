#!/bin/bash
# The oracle, round 30 (docs/benchmarks.md): evaluations score a moving
# average of the weights (tula tune --eval-average, 0.99 by default), where
# every round before read the weights themselves, whose accuracy at the
# constant rate jumps a point or more between quarter-epoch readings.
# The averaged curve is another history setup, so each case's history starts
# empty and is filled first by five knee jobs at development seeds (small_cnn
# 98, 100-103; LeNet-5 62-66), rows of their own (_fill); then the held-out
# cases, fixed before any run: small_cnn to 83% (at most 5 epochs) at seeds
# 108-112 and LeNet-5 to 86% (at most 12 epochs) at seeds 72-76, none run by
# an earlier round; (a) the default and (c) the knee side by side in rotated
# order, as rounds 26-29, both reading the averaged weights; last (a) at the
# same seeds reading the weights themselves (--eval-average 0; _a0), the
# default as rounds 19-29 ran it.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round30.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" "$@"; }
S=(--work /tmp/tula-oracle-round30)
L=(--work /tmp/tula-oracle-round30-lenet --model lenet5 --target 0.86 --max-epochs 12)
mkdir -p "$R/decision_oracle_round30" "$R/decision_oracle_round30_lenet86"
small_history="--history $R/decision_oracle_round30/history.jsonl"
lenet_history="--history $R/decision_oracle_round30_lenet86/history.jsonl"

oracle "${S[@]}" --phases tune --objectives knee --seeds 98,100,101,102,103 \
  --out "$R/decision_oracle_round30_fill.jsonl" --tune-extra="$small_history"
oracle "${S[@]}" --phases headline --headline-methods a,c --seeds 108,109,110,111,112 \
  --out "$R/decision_oracle_round30.jsonl" --tune-extra="$small_history"
oracle "${L[@]}" --phases tune --objectives knee --seeds 62,63,64,65,66 \
  --out "$R/decision_oracle_round30_lenet86_fill.jsonl" --tune-extra="$lenet_history"
oracle "${L[@]}" --phases headline --headline-methods a,c --seeds 72,73,74,75,76 \
  --out "$R/decision_oracle_round30_lenet86.jsonl" --tune-extra="$lenet_history"
oracle "${S[@]}" --phases headline --headline-methods a --seeds 108,109,110,111,112 \
  --out "$R/decision_oracle_round30_a0.jsonl" --a-extra="--eval-average 0"
oracle "${L[@]}" --phases headline --headline-methods a --seeds 72,73,74,75,76 \
  --out "$R/decision_oracle_round30_lenet86_a0.jsonl" --a-extra="--eval-average 0"
