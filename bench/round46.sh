#!/bin/bash
# The oracle, round 46 (docs/benchmarks.md): the knee as the front's least
# time x cost (plan/knee.hpp), which replaced Kneedle's after round 45 showed,
# with the fronts of rounds 11-40 (bench/knee_on_fronts.py), that Kneedle named
# the middle of every three-point front, the default's layout, where the next
# faster configuration saved about 40% of the time for about 20% more money.
# Fixed before its runs, at held-out seeds none run before: ResNet-20 to 87%
# (at most 8 epochs) at 163-165, small_cnn to 83% (at most 5) at 154-156 and
# LeNet-5 to 86% (at most 12) at 142-146. For each seed, in an order rotated by
# seed: the knee job (a later job of its setup: the quick profile measured
# once into the round's cache first), (a) the default (1 x emu-one at 128,
# SGD) and (d) the oracle's knee by the new rule, AGS: 2 x emu-one at 64 for
# small_cnn (round 40's front), 1 x emu-one at 128 for LeNet-5 (round 40's
# front, two points) and for ResNet-20 (round 45's front, where two emu-one
# nodes took 0.76 of one node's time for 1.52x its money). Histories: copies of
# round 44's (small_cnn), round 43's (LeNet-5) and round 45's (ResNet-20).
# small_cnn first, where the rule moves the oracle's knee off the default's
# layout.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round46.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

knee_case 46 small_cnn 154,155,156 emu-one:2:64 "$R/decision_oracle_round44/history.jsonl"
knee_case 46 lenet5 142,143,144,145,146 emu-one:1:128 "$R/decision_oracle_round43_lenet86/history.jsonl" \
  --model lenet5 --target 0.86 --max-epochs 12
knee_case 46 resnet20 163,164,165 emu-one:1:128 "$R/decision_oracle_round45_resnet20/history.jsonl" \
  --model resnet20 --target 0.87 --max-epochs 8
