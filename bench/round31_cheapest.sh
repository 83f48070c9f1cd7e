#!/bin/bash
# The oracle, round 31, the cheapest objective (docs/benchmarks.md): with the
# pilot at the default layout (one emu-one node, where rounds 24-25 piloted on
# two) and the profile read from the round's cache (bench/round31.sh fills
# it), `tula tune --objective cheapest` on small_cnn to 83% at three of round
# 31's held-out seeds (113-115), each beside the configuration that was the
# oracle's cheapest on round 30's grid, 1 x emu-half at 128 (AGS, as the grid
# trains it), at the same seed: the headline's (d) with --headline-knee set to
# it. History: a copy of round 30's, as round 31's knee jobs started with.
# Fixed before its runs. Resumable: decision_oracle.py skips rows already in
# its --out.
#   scripts/emulated-cluster start; bench/round31.sh (its profile cache)
#   TULA=path/to/tula bench/round31_cheapest.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" "$@"; }
S=(--work /tmp/tula-oracle-round31 --profile-cache --seeds 113,114,115 --out "$R/decision_oracle_round31_cheapest.jsonl")
mkdir -p "$R/decision_oracle_round31_cheapest"
h="$R/decision_oracle_round31_cheapest/history.jsonl"
[ -f "$h" ] || cp "$R/decision_oracle_round30/history.jsonl" "$h"
oracle "${S[@]}" --phases tune --objectives cheapest --tune-extra="--history $h"
oracle "${S[@]}" --phases headline --headline-methods d --headline-knee emu-half:1:128
