#!/bin/bash
# The oracle, round 47 (docs/benchmarks.md): the pilot at the layout its
# objective picks at the reference batch (tune/pilot_placement.hpp,
# pilot_at_reference_batch), where it ran on one node of the fastest type for
# the knee until round 46. A first design, the layout of the whole plan made
# before the pilot, ran one job (ResNet-20, seed 166, its row and report in
# decision_oracle_round47_first_design_resnet20*): with no noise scale read
# that plan put the pilot on four emu-half nodes (a plan of global batch
# 28672) and the job took 160 s; the seeds below are new after it. Round 46's
# ResNet-20 knee jobs ran their 108-step pilot on one emu-one node (about 24 s
# of 81-86 s jobs) and then moved to two, +4% to +25% behind two nodes from
# the start. Fixed before its runs, at held-out seeds none run before:
# ResNet-20 to 87% (at most 8 epochs) at 169-171, small_cnn to 83% (at most 5)
# at 157-159, LeNet-5 to 86% (at most 12) at 147-149. For each seed, in an
# order rotated by seed: the knee job (a later job of its setup: the quick
# profile measured once into the round's cache first), (a) the default
# (1 x emu-one at 128, SGD) and (d) the oracle's knee as round 46 graded it
# (AGS): two emu-one nodes at 64 for ResNet-20 (round 45's front, seed 161
# measured again) and small_cnn (round 40's front), one emu-one node at 128
# for LeNet-5. Histories: copies of round 46's. ResNet-20 first: there the
# plan before the pilot is expected to leave one node.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round47.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

knee_case 47 resnet20 169,170,171 emu-one:2:64 "$R/decision_oracle_round46_resnet20/history.jsonl" \
  --model resnet20 --target 0.87 --max-epochs 8
knee_case 47 small_cnn 157,158,159 emu-one:2:64 "$R/decision_oracle_round46_small_cnn/history.jsonl"
knee_case 47 lenet5 147,148,149 emu-one:1:128 "$R/decision_oracle_round46_lenet5/history.jsonl" \
  --model lenet5 --target 0.86 --max-epochs 12
