#!/bin/bash
# The oracle, round 61 (docs/benchmarks.md): a longer held-out case than any
# round ran, to test what round 60 left open: whether the seed floor under a
# plan's whole-job error (bench/prediction_floor.py) falls below the targets'
# 10% where the job runs long enough that one evaluation is a small share of
# it. LeNet-5 to 88% (at most 16 epochs), a target no round used; one run at
# seed 900, outside every round, put the crossing near 5 epochs on 1 x emu-one
# at 128, on a curve flattening toward 89%, so this case also tries the
# give-up rule near a plateau. First jobs as rounds 54, 57, 58 and 60 (no
# history: the stated prior; no cached profile) beside (d) = 1 x emu-one at
# 128 (LeNet-5's knee at 86%, round 50's grid) at held-out seeds 212-217,
# rotated. Fixed before its runs. Resumable: decision_oracle.py skips rows
# already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round61.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

first_jobs 61 lenet5_88 212,213,214,215,216,217 emu-one:1:128 --model lenet5 --target 0.88 --max-epochs 16
