#!/bin/bash
# The oracle, round 52 (docs/benchmarks.md): the fastest objective under round
# 50's code (the bucket-readiness overlap: a split pilot on two nodes now
# calibrates the allreduce's size only, where round 49's calibrated p). Fixed
# before its runs, at held-out seeds none ran before: small_cnn to 83% (at
# most 5 epochs) at 172-174, LeNet-5 to 86% (at most 12) at 162-164; at each
# seed, in an order rotated by seed, `tula tune --objective fastest` (a later
# job: the quick profile measured once into the round's cache first; the
# history a copy of round 50's), (d) two emu-one nodes at 64 (AGS), the
# fastest of rounds 29, 30 and 45's fronts, and (d) once more (the repeat).
# ResNet-20 is left out: its nine runs would take longer than the rest.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round52.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

objective_case 52 fastest emu-one:2:64 50 small_cnn 172,173,174
objective_case 52 fastest emu-one:2:64 50 lenet5 162,163,164 --model lenet5 --target 0.86 --max-epochs 12
