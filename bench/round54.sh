#!/bin/bash
# The oracle, round 54 (docs/benchmarks.md): what rounds 50-53 left ungraded
# under round 50's code (the bucket-readiness overlap). Fixed before its runs,
# at held-out seeds none ran before:
# 1. First jobs: `tula tune --objective knee` with no history (the stated
#    prior) and no cached profile (each job measures its own), beside (d) the
#    oracle's knee at the same seed, rotated: small_cnn to 83% (at most 5
#    epochs) at 178-180 against 2 x emu-one at 64, LeNet-5 to 86% (at most 12)
#    at 165-167 against 1 x emu-one at 128.
# 2. ResNet-20's fastest objective (round 49's, before the readiness model,
#    is the last): to 87% (at most 8 epochs) at 181-183, a later job (the
#    quick profile measured once into the round's cache; the history a copy of
#    round 50's), beside (d) = 2 x emu-one at 64 and its repeat, rotated.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round54.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

first_jobs 54 small_cnn 178,179,180 emu-one:2:64
first_jobs 54 lenet5 165,166,167 emu-one:1:128 --model lenet5 --target 0.86 --max-epochs 12
objective_case 54 fastest emu-one:2:64 50 resnet20 181,182,183 --model resnet20 --target 0.87 --max-epochs 8
