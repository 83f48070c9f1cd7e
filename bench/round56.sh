#!/bin/bash
# The oracle, round 56 (docs/benchmarks.md): round 53's headline (a)-(d) for
# a second model, LeNet-5 to 86%, which no headline with (b) has covered, under
# the code as it stands. Fixed before its runs, at held-out LeNet-5 seeds
# 168-170, none run before (at most 12 epochs; (b) at most 24, room for a
# large batch's extra epochs). First (b)'s screen under this code: SGD at
# 0.003125, 0.00625, 0.0125, 0.025 and 0.05 (at batch 128, scaled linearly to
# 2048, 0.5-epoch warmup) on 4 processes at the largest configuration's batch,
# seed 0, scored on a 10,000-sample validation split: no LeNet-5 screen ran
# before, so the range is small_cnn's two screens together. Then at each seed,
# in an order rotated by seed: (a) the default (1 x emu-one at 128, SGD
# 0.05), (b) standard large batch (4 x emu-half at 512, B = 2048, the screened
# rate), (c) `tula tune --objective knee` (a later job: the quick profile
# measured once into the round's cache; the history a copy of round 52's
# LeNet-5 case) and (d) the oracle's knee of round 40's grid (1 x emu-one at
# 128, AGS). Amended after the five rates' screen and before any headline
# run: none reached 86% in 24 epochs and the best, 0.003125 (85.7%), lay at
# the screen's lower edge (0.00625 fell to 24%, 0.0125 reached 69%, 0.025 84%,
# 0.05 diverged), so the screen goes on downward with 0.0015625 and
# 0.00078125, and (b) takes the pick of all seven.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round56.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

headline_case 56 lenet5 168,169,170 emu-one:1:128 0.00078125,0.0015625,0.003125,0.00625,0.0125,0.025,0.05 \
  "$R/decision_oracle_round52_fastest_lenet5/history.jsonl" --model lenet5 --target 0.86 --max-epochs 12 --b-max-epochs 24
