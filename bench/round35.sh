#!/bin/bash
# The oracle, round 35 (docs/benchmarks.md): the fastest objective again, now
# that a cached profile is read in the tune process (no `tula profile` child:
# round 34's jobs spent 0.6-0.9 s on that read, 2-3% of a LeNet-5 job). Fixed
# before its runs: `tula tune --objective fastest` on held-out seeds none ran
# before, LeNet-5 to 86% (at most 12 epochs) at 98-103 and small_cnn to 83%
# (at most 5 epochs) at 124-126; beside each job at the same seed the
# oracle's fastest, (d) = 2 x emu-one at 64 (AGS, as the grid trains it), and
# (d) once more in a file of its own (the repeat: the spread of two runs of
# the same steps); the three in an order rotated by seed. Later jobs of their
# setup: the quick profile measured once into the round's cache first.
# Histories: copies of round 34's (the same setup, its jobs included).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round35.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
for model in lenet5 small_cnn; do
  round_case "$model" 35 34 124,125,126 98,99,100,101,102,103
  round_setup "$model" "$work" "$name" "$source_history"
  i=0
  for seed in ${seeds//,/ }; do
    for arm in $(rotated "$i" job d repeat); do fastest_arm "$arm" "$seed" "$name"; done
    i=$((i + 1))
  done
done
