#!/bin/bash
# The oracle, round 21 (docs/benchmarks.md): no warmup at the reference batch,
# on the second case. Round 20 measured the change (tune 21f1c0b: a launch at
# or below --reference-batch trains at the tuned rate from its first step) on
# small_cnn, the model it was found on. Held out, fixed before any run:
# LeNet-5 to 86% (at most 12 epochs) at seeds 52-56 (none run by an earlier
# round), (a) the default and (c) the knee side by side in rotated order, as
# round 20; (c) from an empty history of the case (the setup changed with the
# rule), which its jobs fill.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round21.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round21_lenet86/history.jsonl"
mkdir -p "$R/decision_oracle_round21_lenet86"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round21-lenet --out "$R/decision_oracle_round21_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --phases headline --headline-methods a,c --seeds 52,53,54,55,56 \
  --tune-extra="--history $history"
