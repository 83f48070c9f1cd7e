#!/bin/bash
# The oracle, round 29's grid (docs/benchmarks.md): the knee's own criterion
# needs the day's measured front. Round 29's knee jobs went to 1 x emu-one at
# 128 (small_cnn's knee on round 24's grid; LeNet-5 has had no grid). Fixed
# before its runs: the four configurations round 29's plans put on or near
# their fronts (2 x emu-one at 64, 1 x emu-one at 128, 1 x emu-half at 128,
# 2 x emu-half at 64), AGS as tune runs it, LeNet-5 to 86% at seeds 67 and 68,
# then small_cnn to 83% at seeds 104 and 106 (round 29's seeds, so each knee
# job stands beside the grid at its own seed).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round29_grid.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
grid() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --phases grid \
  --grid-only emu-one:2:64,emu-one:1:128,emu-half:1:128,emu-half:2:64 "$@"; }
grid --work /tmp/tula-oracle-round29-lenet-grid --out "$R/decision_oracle_round29_lenet86_grid.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --grid-seeds 67,68
grid --work /tmp/tula-oracle-round29-grid --out "$R/decision_oracle_round29_grid.jsonl" --grid-seeds 104,106
