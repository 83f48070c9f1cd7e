#!/bin/bash
# The oracle, round 58 (docs/benchmarks.md): round 57's cases at fresh seeds
# under the code as it stands (574fcc7: the forecast's exponent prior, from
# the evaluations alone; the loss forecast opt-in since 40c2ee0, a change made
# after seeing round 57). Fixed before its runs, at held-out seeds none ran
# before:
# 1. First jobs, as rounds 54 and 57: `tula tune --objective knee` with no
#    history (the stated prior) and no cached profile, beside (d) the oracle's
#    knee at the same seed, rotated: small_cnn to 83% (at most 5 epochs) at
#    193-198 against 2 x emu-one at 64, LeNet-5 to 86% (at most 12) at 177-182
#    against 1 x emu-one at 128.
# 2. Later jobs, as round 57: the knee job with round 50's history of the
#    case (the quick profile measured once into the round's cache, now kept
#    beside the rows), (a) the default and (d) at each seed, rotated: small_cnn
#    at 199-201 against 2 x emu-one at 64, LeNet-5 at 183-185 against
#    1 x emu-one at 128.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round58.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

first_jobs 58 small_cnn 193,194,195,196,197,198 emu-one:2:64
first_jobs 58 lenet5 177,178,179,180,181,182 emu-one:1:128 --model lenet5 --target 0.86 --max-epochs 12
knee_case 58 small_cnn 199,200,201 emu-one:2:64 "$R/decision_oracle_round50_small_cnn/history.jsonl"
cp -n "$work/profile.json" "$R/$name/profile.json"
knee_case 58 lenet5 183,184,185 emu-one:1:128 "$R/decision_oracle_round50_lenet5/history.jsonl" \
  --model lenet5 --target 0.86 --max-epochs 12
cp -n "$work/profile.json" "$R/$name/profile.json"
