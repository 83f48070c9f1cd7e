#!/bin/bash
# The oracle, round 42 (docs/benchmarks.md): the fastest objective with
# OpenBLAS, where round 40's front moved: on LeNet-5 the day's fastest is now
# 1 x emu-one at 128 (two emu-one nodes at 64 took 22 s in the median against
# 17 s), on small_cnn still 2 x emu-one at 64. Fixed before its runs:
# `tula tune --objective fastest` at held-out seeds none ran before, LeNet-5
# to 86% (at most 12 epochs) at 132-136 and small_cnn to 83% (at most 5
# epochs) at 145-147; beside each job at the same seed (d) = that case's
# fastest of round 40's grid (AGS, as the grid trains it), and (d) once more
# in a file of its own (the repeat: the spread of two runs of the same
# steps); the three in an order rotated by seed. Later jobs of their setup:
# the quick profile measured once into the round's cache first. Histories:
# copies of round 41's.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round42.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
objective_round 42 41 145,146,147 132,133,134,135,136 fastest emu-one:2:64 emu-one:1:128
