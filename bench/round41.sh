#!/bin/bash
# The oracle, round 41 (docs/benchmarks.md): first jobs with OpenBLAS, as
# rounds 38-39 graded them: (c) the knee job measuring its own profile and
# (d) the oracle's knee (1 x emu-one at 128, AGS: round 40's day's knee on
# small_cnn and the configuration every knee job of rounds 36-40 kept) side by
# side in rotated order, histories copies of round 40's.
# Held out, fixed before any run: LeNet-5 to 86% (at most 12 epochs) at seeds
# 127-131 and small_cnn to 83% (at most 5 epochs) at seeds 142-144, none run
# by an earlier round.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round41.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
first_jobs_round 41 40 142,143,144 127,128,129,130,131
