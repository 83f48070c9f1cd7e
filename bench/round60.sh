#!/bin/bash
# The oracle, round 60 (docs/benchmarks.md): a longer held-out case, to see
# whether the seed floor under a plan's whole-job error (bench/prediction_floor.py)
# falls below the targets' 10% where one evaluation is a smaller share of the
# run, and whether the plans reach it there. small_cnn to 86% (at most 8
# epochs), a target no round used, first jobs as rounds 54, 57 and 58 (no
# history: the stated prior; no cached profile) beside (d) = 2 x emu-one at 64
# at each seed, rotated, at held-out seeds 208-211. Fixed before its runs.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round60.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"

first_jobs 60 small_cnn_86 208,209,210,211 emu-one:2:64 --model small_cnn --target 0.86 --max-epochs 8
