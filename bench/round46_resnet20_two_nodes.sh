#!/bin/bash
# Round 46's ResNet-20 case, its second oracle candidate (docs/benchmarks.md,
# "The oracle, rounds 45 and 46"), fixed before these runs and run after
# round46.sh. On round 45's front two emu-one nodes at 64 took 67 s in the
# median (74 s at seed 161, a run that overlapped a build and tests run at
# nice 19 on this machine: 74 s for 1.00 epoch where seeds 160 and 162 took
# 47-54 s an epoch) against 88 s for one node at 128; by least time x cost the
# one node is the knee with that run (0.215 against 0.248) and the two nodes
# without it. So: seed 161's run of two nodes measured again, into its own
# file, and at round 46's seeds 163-165 two emu-one nodes at 64 (AGS) beside
# the (d) = one node that round46.sh ran, each graded by the pair.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round46_resnet20_two_nodes.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
M=(--model resnet20 --target 0.87 --max-epochs 8)
work=/tmp/tula-oracle-round46-resnet20
/usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work-repeat" \
  --phases grid --grid-only emu-one:2:64 --grid-seeds 161 --out "$R/decision_oracle_round45_resnet20_grid_repeat.jsonl"
/usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work" --profile-cache \
  --phases headline --headline-methods d --headline-knee emu-one:2:64 --seeds 163,164,165 \
  --out "$R/decision_oracle_round46_resnet20_two_nodes.jsonl"
