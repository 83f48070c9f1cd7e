#!/bin/bash
# The oracle, round 50 (docs/benchmarks.md): the overlap from where each
# bucket is ready in backward (predict::pipelined_step over the profile's
# samples.compute[].bucket_ready_fraction, measured by the engine's reducer on
# one worker) instead of a p fitted to the quick profile's loopback steps,
# made after round 48's small_cnn knee jobs planned one node on a profile
# whose fitted p (1.28) over-predicted the two-node wait after backward (8.4
# of 14.1 ms predicted, 1.1-1.3 ms measured), and round 49's profile of the
# same setup fitted 2.11. Fixed before its runs, at held-out seeds none ran
# before: small_cnn to 83% (at most 5 epochs) at 166-168, LeNet-5 to 86% (at
# most 12) at 156-158, ResNet-20 to 87% (at most 8) at 178-180. For each
# seed, in an order rotated by seed: the knee job (a later job: the quick
# profile measured once into the round's cache first), (a) the default (1 x
# emu-one at 128, SGD) and (d) the oracle's knee as round 47 graded it (AGS):
# two emu-one nodes at 64 for small_cnn and ResNet-20, one emu-one node at
# 128 for LeNet-5. Histories: copies of round 48's. small_cnn first: the case
# the change is for.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round50.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

knee_case 50 small_cnn 166,167,168 emu-one:2:64 "$R/decision_oracle_round48_small_cnn/history.jsonl"
knee_case 50 lenet5 156,157,158 emu-one:1:128 "$R/decision_oracle_round48_lenet5/history.jsonl" \
  --model lenet5 --target 0.86 --max-epochs 12
knee_case 50 resnet20 178,179,180 emu-one:2:64 "$R/decision_oracle_round48_resnet20/history.jsonl" \
  --model resnet20 --target 0.87 --max-epochs 8
