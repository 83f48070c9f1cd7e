#!/bin/bash
# The oracle, round 30's LeNet-5 grid, more seeds (docs/benchmarks.md): on its
# two seeds the day's knee, 1 x emu-one at 128, took 27 and 38 s (2.25 and
# 3.25 epochs), so the oracle's own time moves by a third between seeds.
# Fixed before its runs: the two emu-one configurations at global batch 128
# (2 x 64 and 1 x 128) at round 30's other LeNet-5 knee seeds, 73, 75 and 76,
# LeNet-5 to 86%, AGS as tune runs it, so every knee job stands beside both
# at its own seed.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round30_grid3.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --phases grid \
  --grid-only emu-one:2:64,emu-one:1:128 --work /tmp/tula-oracle-round30-lenet-grid --model lenet5 --target 0.86 \
  --max-epochs 12 --out "$R/decision_oracle_round30_lenet86_grid.jsonl" --grid-seeds 73,75,76
