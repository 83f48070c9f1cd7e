#!/bin/bash
# The oracle, round 30's grid (docs/benchmarks.md): the day's front with the
# averaged weights evaluated (tune's default since 713e92d), to grade round
# 30's knee jobs, all of which went to 1 x emu-one at 128. Fixed before its
# runs: round 29's four configurations (2 x emu-one at 64, 1 x emu-one at
# 128, 1 x emu-half at 128, 2 x emu-half at 64), AGS as tune runs it,
# small_cnn to 83% at seeds 108 and 110, then LeNet-5 to 86% at seeds 72 and
# 74 (round 30's seeds, so each knee job stands beside the grid at its own
# seed).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round30_grid.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
grid() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --phases grid \
  --grid-only emu-one:2:64,emu-one:1:128,emu-half:1:128,emu-half:2:64 "$@"; }
grid --work /tmp/tula-oracle-round30-grid --out "$R/decision_oracle_round30_grid.jsonl" --grid-seeds 108,110
grid --work /tmp/tula-oracle-round30-lenet-grid --out "$R/decision_oracle_round30_lenet86_grid.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --grid-seeds 72,74
