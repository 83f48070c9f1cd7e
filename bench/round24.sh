#!/bin/bash
# The oracle, round 24 (docs/benchmarks.md): the grid re-measured under the
# rule of 21f1c0b (no warmup at or below the reference batch, 128), the same
# day as the tune jobs it grades. Round 11's grid trained every configuration
# with the warmup; its knee (1 x emu-one at 128) and the others at or below
# B = 128 now train without it, so the front may move.
# Fixed before any run. The grid: the configurations that could be on the
# front, from round 11's rows (seeds 2-4): 1 x emu-half at 32 and 128 (the
# cheapest end), 1 x emu-one at 32, 64 and 128, 2 x emu-one at 32, 64 and
# 128. Left out, each behind a kept configuration in time and cost on every
# seed of round 11 by a margin the rule cannot close (the rule acts alike at
# every batch at or below 128; above it nothing changed): 2 x emu-half at 32
# and 128, 4 x emu-half at 32, 128 and 512, 2 x emu-one at 512.
# Held out: small_cnn to 83% at seeds 85-87 (none run by an earlier round);
# the grid at 85 and 86; tune --objective knee and fastest and the default
# (a) at 85-87, seed by seed between the grid's seeds; then the cheapest
# objective at 85-87 (about seven minutes a job on emu-half, last so that a
# short day loses only it). Tune jobs from a copy of round 23's history of the
# case (rounds 20 and 23, eleven jobs), adding their own.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round24.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round24/history.jsonl"
mkdir -p "$R/decision_oracle_round24"
[ -e "$history" ] || cp "$R/decision_oracle_round23/history.jsonl" "$history"
grid=emu-half:1:32,emu-half:1:128,emu-one:1:32,emu-one:1:64,emu-one:1:128,emu-one:2:32,emu-one:2:64,emu-one:2:128
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round24 --out "$R/decision_oracle_round24.jsonl" --grid-only "$grid" \
  --grid-seeds 85,86 --seeds 85,86,87 --tune-extra="--history $history" "$@"; }
oracle --phases grid,tune,a --objectives knee,fastest
oracle --phases tune --objectives cheapest
