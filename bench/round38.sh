#!/bin/bash
# The oracle, round 38 (docs/benchmarks.md): round 37's first jobs again with
# the cheaper quick profile of 6cc7e4b (the communication trials' ranks as
# threads of the tune process, the evaluation trials sized from their own
# warm-up to 0.4 s, the loader trial 0.1 s, no second-long stall when a worker
# reaches rank 0's store before it listens).
# Held out, fixed before any run: `tula tune --objective knee` on LeNet-5 to
# 86% (at most 12 epochs) at seeds 114-118 and small_cnn to 83% (at most 5
# epochs) at seeds 133-135, none run by an earlier round; (c) the knee job,
# profiling anew (--no-profile-cache), and (d) the oracle's knee (1 x emu-one
# at 128, AGS, as the grid trains it) side by side in rotated order
# (decision_oracle.py's headline). Histories: copies of round 37's (the same
# setup), so that what differs from round 37 is the build.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round38.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
first_jobs_round 38 37 133,134,135 114,115,116,117,118
