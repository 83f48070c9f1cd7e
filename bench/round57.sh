#!/bin/bash
# The oracle, round 57 (docs/benchmarks.md): the forecast's exponent prior
# (c55758d's study, built in the commit before this script), measured where
# rounds 50-56 missed and where they met the targets. Fixed before its runs,
# at held-out seeds none ran before:
# 1. First jobs, as round 54: `tula tune --objective knee` with no history
#    (the stated prior) and no cached profile, beside (d) the oracle's knee at
#    the same seed, rotated: small_cnn to 83% (at most 5 epochs) at 187-189
#    against 2 x emu-one at 64, LeNet-5 to 86% (at most 12) at 171-173 against
#    1 x emu-one at 128.
# 2. Later jobs, as rounds 46-47: the knee job with round 50's history of the
#    case (the quick profile measured once into the round's cache), (a) the
#    default and (d) at each seed, rotated: small_cnn at 190-192 against
#    2 x emu-one at 64, LeNet-5 at 174-176 against 1 x emu-one at 128.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round57.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

first_jobs 57 small_cnn 187,188,189 emu-one:2:64
first_jobs 57 lenet5 171,172,173 emu-one:1:128 --model lenet5 --target 0.86 --max-epochs 12
knee_case 57 small_cnn 190,191,192 emu-one:2:64 "$R/decision_oracle_round50_small_cnn/history.jsonl"
knee_case 57 lenet5 174,175,176 emu-one:1:128 "$R/decision_oracle_round50_lenet5/history.jsonl" \
  --model lenet5 --target 0.86 --max-epochs 12
