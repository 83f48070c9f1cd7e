#!/bin/bash
# The oracle, round 29 (docs/benchmarks.md): two changes, measured together
# on cases no change was developed on. (1) The knee's move after the pilot
# (and at a watch) is weighed by the knee's own criterion on what is left to
# run (tune::knee_move_pays), where the two-sided 10% rule declined all 17
# knee moves the plan made in rounds 24-28. (2) The emulated catalog's
# allreduce_on_cores (0.4): across nodes backward gives up that share of the
# allreduce's time, so a pilot on two one-core nodes no longer calibrates the
# one-node step high (the plan's one-node step at 128 ran +10.9% to +31.0%
# over the default's side-by-side runs on LeNet-5 in rounds 21, 26 and 28).
# Held out, fixed before any run: small_cnn to 83% (at most 5 epochs) at
# seeds 99, 104-107 and LeNet-5 to 86% (at most 12 epochs) at seeds 67-71,
# none run by an earlier round (100-103 were the changes' development
# seeds); (a) the default and (c) the knee side by side in rotated order, as
# rounds 26-28; (c) from a copy of round 28's history of each case (the same
# AGS setup, five jobs each), adding its own.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round29.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --phases headline --headline-methods a,c "$@"; }
mkdir -p "$R/decision_oracle_round29" "$R/decision_oracle_round29_lenet86"
[ -e "$R/decision_oracle_round29/history.jsonl" ] ||
  cp "$R/decision_oracle_round28/history.jsonl" "$R/decision_oracle_round29/history.jsonl"
[ -e "$R/decision_oracle_round29_lenet86/history.jsonl" ] ||
  cp "$R/decision_oracle_round28_lenet86/history.jsonl" "$R/decision_oracle_round29_lenet86/history.jsonl"
oracle --work /tmp/tula-oracle-round29 --out "$R/decision_oracle_round29.jsonl" --seeds 99,104,105,106,107 \
  --tune-extra="--history $R/decision_oracle_round29/history.jsonl"
oracle --work /tmp/tula-oracle-round29-lenet --out "$R/decision_oracle_round29_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --seeds 67,68,69,70,71 \
  --tune-extra="--history $R/decision_oracle_round29_lenet86/history.jsonl"
