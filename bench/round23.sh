#!/bin/bash
# The oracle, round 23 (docs/benchmarks.md): regret within pairs under the
# rule of 21f1c0b (no warmup at the reference batch). Round 13 graded the knee
# and the fastest objective within pairs with the warmup at every batch. Held
# out, fixed before any run: small_cnn to 83%, seeds 82-84 (none run by an
# earlier round), for each seed and objective the oracle's configuration of
# round 13 (knee 1 x emu-one at 128, fastest 2 x emu-one at 32, both at or
# below the reference batch, so now without the warmup, as tune's jobs there),
# then `tula tune --objective` at that seed, then the configuration again.
# Each job from a copy of round 20's history of the case (the same setup, five
# jobs), adding its own. The cheapest objective's pairs (about 14 minutes a
# seed on emu-half) are not re-run. The grid itself is not re-measured: the
# oracle's configurations are round 11's day's.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round23.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
out="$R/decision_oracle_round23.jsonl"
history="$R/decision_oracle_round23/history.jsonl"
mkdir -p "$R/decision_oracle_round23"
[ -e "$history" ] || cp "$R/decision_oracle_round20/history.jsonl" "$history"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round23 --out "$out" "$@"; }
oracle --phases paired --paired knee=emu-one:1:128 --seeds 82,83,84 --tune-extra="--history $history"
oracle --phases paired --paired fastest=emu-one:2:32 --seeds 82,83,84 --tune-extra="--history $history"
