#!/bin/bash
# The oracle, round 43 (docs/benchmarks.md): the cheapest objective with
# OpenBLAS. Round 32 graded it on the reference BLAS (six of six within 5% of
# the oracle's cheapest at the same seed); round 40's grid, on OpenBLAS, still
# names 1 x emu-half at 128 the cheapest on both cases (LeNet-5 0.00041,
# small_cnn 0.00106 in the median). Fixed before its runs: `tula tune
# --objective cheapest` at held-out seeds none ran before, LeNet-5 to 86% (at
# most 12 epochs) at 137-141 and small_cnn to 83% (at most 5 epochs) at
# 148-150; beside each job at the same seed (d) = 1 x emu-half at 128 (AGS, as
# the grid trains it), and (d) once more in a file of its own (the repeat: the
# spread of two runs of the same steps); the three in an order rotated by
# seed. Later jobs of their setup: the quick profile measured once into the
# round's cache first. Histories: copies of round 42's.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round43.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
objective_round 43 42 148,149,150 137,138,139,140,141 cheapest emu-half:1:128 emu-half:1:128
