#!/bin/bash
# The oracle, round 49 (docs/benchmarks.md): the fastest objective under
# round 48's code (the pilot's step split, the last bucket never hidden, the
# recorded buckets). The fastest's pilot runs at the fastest layout at the
# reference batch, two emu-one nodes, so its split calibrates the ring across
# nodes, which the knee's one-node pilots of small_cnn could not. Fixed before
# its runs, at held-out seeds none run before: LeNet-5 to 86% (at most 12
# epochs) at 153-155, small_cnn to 83% (at most 5) at 163-165, ResNet-20 to
# 87% (at most 8) at 175-177. For each seed, in an order rotated by seed: the
# fastest job (a later job: the quick profile measured once into the round's
# cache), (d) the oracle's fastest, two emu-one nodes at 64 (AGS) for all
# three (rounds 29, 30 and 45 measured it fastest), and (d) again into
# NAME_repeat.jsonl (the spread of two runs of the same steps). Histories:
# copies of round 48's.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round49.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

objective_case 49 fastest emu-one:2:64 48 lenet5 153,154,155 --model lenet5 --target 0.86 --max-epochs 12
objective_case 49 fastest emu-one:2:64 48 small_cnn 163,164,165
objective_case 49 fastest emu-one:2:64 48 resnet20 175,176,177 --model resnet20 --target 0.87 --max-epochs 8
