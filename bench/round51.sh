#!/bin/bash
# The oracle, round 51 (docs/benchmarks.md): the cheapest objective, last
# graded in round 43 (small_cnn +3.1% to +9.7%, LeNet-5 -5.0% to +0.9%),
# under the code of round 50 (the pilot's split step, the last bucket, the
# bucket-readiness overlap). Fixed before its runs, at held-out seeds none ran
# before: small_cnn to 83% (at most 5 epochs) at 169-171, LeNet-5 to 86% (at
# most 12) at 159-161; at each seed, in an order rotated by seed, `tula tune
# --objective cheapest` (a later job: the quick profile measured once into the
# round's cache first; the history a copy of round 50's), (d) the cheapest of
# round 40's grid, one emu-half node at 128 (AGS), and (d) once more (the
# repeat: the spread of two runs of the same steps). small_cnn first: the
# case round 43 missed.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round51.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

objective_case 51 cheapest emu-half:1:128 50 small_cnn 169,170,171
objective_case 51 cheapest emu-half:1:128 50 lenet5 159,160,161 --model lenet5 --target 0.86 --max-epochs 12
