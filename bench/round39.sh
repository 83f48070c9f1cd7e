#!/bin/bash
# The oracle, round 39 (docs/benchmarks.md): round 38 again at more held-out
# seeds, the same design and the tula of 55e04be (6cc7e4b's profile; since
# then only the time budget's estimate, which a tune job's 2-minute budget
# never makes cut, and comments).
# Held out, fixed before any run: LeNet-5 to 86% (at most 12 epochs) at seeds
# 119-123 and small_cnn to 83% (at most 5 epochs) at seeds 136-138, none run
# by an earlier round. (c) the knee job
# profiling anew and (d) the oracle's knee (1 x emu-one at 128, AGS) side by
# side in rotated order; histories copies of round 38's.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round39.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
first_jobs_round 39 38 136,137,138 119,120,121,122,123
