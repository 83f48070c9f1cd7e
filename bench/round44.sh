#!/bin/bash
# The oracle, round 44 (docs/benchmarks.md): round 43's small_cnn case again
# after 6352008 (no heap block mapped on its own). In round 43 small_cnn's
# cheapest jobs ran the same steps as (d) beside them and stood at +3.1% to
# +9.7%: their evaluations took 2.7-3.0 s where (d)'s took 2.2-2.4 s, and
# with glibc mapping every block above 32 MiB an evaluation's time moved
# with the page faults it drew (docs/benchmarks.md, "Evaluations without
# page faults"). Fixed before its runs: `tula tune --objective cheapest` on
# small_cnn to 83% (at most 5 epochs) at held-out seeds 151-153, none run
# before; beside each job at the same seed (d) = 1 x emu-half at 128 (AGS)
# and (d) once more (the repeat); rotated by seed. Later jobs of their setup:
# the quick profile measured once into the round's cache first. History: a
# copy of round 43's.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round44.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
objective_round 44 43 151,152,153 "" cheapest emu-half:1:128 ""
