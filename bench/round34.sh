#!/bin/bash
# The oracle, round 34 (docs/benchmarks.md): the fastest objective under the
# code as it stands (the pilot two workers at 64 on two emu-one nodes, the
# noise read from them, the averaged weights, the job histories), last graded
# in rounds 24-25 against a grid of another hour. Here against the oracle's
# fastest on rounds 29-31's grids, 2 x emu-one at 64 (AGS, as the grid trains
# it), run beside each job at the same seed.
# Held out, fixed before any run: `tula tune --objective fastest` on small_cnn
# to 83% (at most 5 epochs) at seeds 121-123 and LeNet-5 to 86% (at most 12
# epochs) at seeds 90-92, none run by an earlier round; the job and (d) at
# each seed in an order alternated by seed. Later jobs of their setup: the
# quick profile measured once into the round's cache first. Histories: copies
# of round 31's (the same setup).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round34.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
for model in small_cnn lenet5; do
  round_case "$model" 34 31 121,122,123 90,91,92
  round_setup "$model" "$work" "$name" "$source_history"
  i=0
  for seed in ${seeds//,/ }; do
    for arm in $(rotated "$i" job d); do fastest_arm "$arm" "$seed" "$name"; done
    i=$((i + 1))
  done
done
