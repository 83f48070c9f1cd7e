#!/bin/bash
# The oracle, round 37 (docs/benchmarks.md): the knee graded on first jobs of
# a machine, the quick profile measured by each job (in the tune process since
# 728ae19, with the anchor's warm-up of 358ca6c and the allocator trimmed
# after it), where rounds 35-36 graded later jobs (the profile read from the
# cache) and estimated a first job by adding a profile's seconds.
# Held out, fixed before any run: `tula tune --objective knee` on LeNet-5 to
# 86% (at most 12 epochs) at seeds 109-113 and small_cnn to 83% (at most 5
# epochs) at seeds 130-132, none run by an earlier round; (c) the knee job,
# profiling anew (--no-profile-cache), and (d) the oracle's knee (1 x emu-one at
# 128, AGS, as the grid trains it) side by side in rotated order
# (decision_oracle.py's headline). Histories: copies of round 36's (the same
# setup), so that what differs from round 36 is the profile measured.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round37.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
first_jobs_round 37 36 130,131,132 109,110,111,112,113
