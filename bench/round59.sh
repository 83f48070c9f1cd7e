#!/bin/bash
# The oracle, round 59 (docs/benchmarks.md): the fastest and the cheapest
# objectives under the code as it stands (574fcc7; rounds 51 and 52 measured
# them under round 50's code, before the exponent prior and the loss
# forecast's move to opt-in). Fixed before its runs, at held-out seeds none
# ran before, as rounds 51 and 52 (objective_case): the job with round 50's
# history of the case (the quick profile measured once into the round's
# cache), (d) the oracle's best for the objective and (d)'s repeat at each
# seed, rotated:
# - fastest: small_cnn at 202-204 and LeNet-5 at 186-188 against
#   2 x emu-one at 64;
# - cheapest: LeNet-5 at 189-191 and small_cnn at 205-207 against
#   1 x emu-half at 128.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round59.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

objective_case 59 fastest emu-one:2:64 50 small_cnn 202,203,204
objective_case 59 fastest emu-one:2:64 50 lenet5 186,187,188 --model lenet5 --target 0.86 --max-epochs 12
objective_case 59 cheapest emu-half:1:128 50 lenet5 189,190,191 --model lenet5 --target 0.86 --max-epochs 12
objective_case 59 cheapest emu-half:1:128 50 small_cnn 205,206,207
