#!/bin/bash
# The oracle, round 26 (docs/benchmarks.md): the second case again, after
# 70817c8 (the plan's front counts every evaluation a tune job makes) and the
# rounds since round 21. Held out, fixed before any run: LeNet-5 to 86% (at
# most 12 epochs) at seeds 57-61 (none run by an earlier round), (a) the
# default and (c) the knee side by side in rotated order, as round 21; (c)
# from a copy of round 21's history of the case (its five jobs), adding its
# own, so every plan here has a history: the whole-job and time-left errors
# on LeNet-5 with one (round 21 measured 11.4% median at the plan, one of
# five within 10% at half).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round26.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round26_lenet86/history.jsonl"
mkdir -p "$R/decision_oracle_round26_lenet86"
[ -e "$history" ] || cp "$R/decision_oracle_round21_lenet86/history.jsonl" "$history"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round26-lenet --out "$R/decision_oracle_round26_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --phases headline --headline-methods a,c --seeds 57,58,59,60,61 \
  --tune-extra="--history $history"
