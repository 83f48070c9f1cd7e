#!/bin/bash
# The oracle, round 30's grid, more seeds (docs/benchmarks.md): on the first
# grid's two seeds (108, 110) both emu-one configurations at global batch 128
# crossed a quarter epoch apart (2 x 64 at 1.25 epochs, 1 x 128 at 1.50), so
# the one node measured dearer than the two where, epoch for epoch, it costs
# less; with two seeds the oracle's own time carries that quarter epoch.
# Fixed before its runs: those two configurations at round 30's other knee
# seeds, 109, 111 and 112, small_cnn to 83%, AGS as tune runs it, so every
# knee job stands beside both at its own seed.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round30_grid2.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --phases grid \
  --grid-only emu-one:2:64,emu-one:1:128 --work /tmp/tula-oracle-round30-grid \
  --out "$R/decision_oracle_round30_grid.jsonl" --grid-seeds 109,111,112
