#!/bin/bash
# The oracle, round 53 (docs/benchmarks.md): the headline (a)-(d) side by side
# under the code as it stands (the bucket-readiness overlap of round 50),
# which no round has run since round 27, with (b)'s rate screened again.
# Fixed before its runs: small_cnn to 83% (at most 5 epochs; (b) at most 8) at
# held-out seeds 175-177, none run before. First (b)'s screen under this
# code: SGD at 0.003125, 0.00625 and 0.0125 (at batch 128, scaled linearly to
# 2048, 0.5-epoch warmup) on 4 processes at the largest configuration's batch,
# seed 0, scored on a 10,000-sample validation split; round 1's screen picked
# 0.00625, the lowest of its four rates (0.025 reached 64%, 0.05 diverged), so
# one lower rate is added and the two that never came near are left out. Then
# at each seed, in an order rotated by seed: (a) the default (1 x emu-one at
# 128, SGD 0.05), (b) standard large batch (4 x emu-half at 512, B = 2048, the
# screened rate), (c) `tula tune --objective knee` (a later job: the quick
# profile measured once into the round's cache; the history a copy of round
# 52's small_cnn case) and (d) the oracle's knee of round 50 (2 x emu-one at
# 64, AGS). Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round53.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

headline_case 53 small_cnn 175,176,177 emu-one:2:64 0.003125,0.00625,0.0125 \
  "$R/decision_oracle_round52_fastest_small_cnn/history.jsonl"
