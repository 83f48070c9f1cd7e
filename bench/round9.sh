#!/bin/bash
# The oracle, round 9 (docs/benchmarks.md): regret measured against a grid run
# the same day. The grid of round 1 (12 configurations, decision_oracle.py's
# GRID) at seed 0, then `tula tune --objective knee|fastest|cheapest` at
# held-out seeds 29-31 of small_cnn to 83% (run by no earlier round), the
# objectives' order rotated by seed, each job from a copy of round 8's history
# of the case (its with-change arm), adding its own; then the grid at seed 1
# and the default (a) at the tune seeds, as time allows. Fixed before any of
# its runs. Resumable: decision_oracle.py skips rows already in its --out, and
# a history already copied is kept.
#   scripts/emulated-cluster start
#   bench/round9.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
out="$R/decision_oracle_round9.jsonl"
history="$R/decision_oracle_round9/history.jsonl"
mkdir -p "$R/decision_oracle_round9"
[ -e "$history" ] || cp "$R/decision_oracle_round8/history.jsonl" "$history"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --work /tmp/tula-oracle-round9 --out "$out" "$@"; }
oracle --phases grid --grid-seeds 0
objectives=(knee fastest cheapest)
for i in 0 1 2; do
  rotated=("${objectives[@]:i}" "${objectives[@]:0:i}")
  oracle --phases tune --objectives "$(IFS=,; echo "${rotated[*]}")" --seeds $((i + 29)) \
    --tune-extra="--history $history"
done
oracle --phases grid --grid-seeds 1
oracle --phases a --seeds 29,30,31
# Added after the rows above, before any of its runs: (b), standard large batch at the largest configuration with
# round 1's screened rate (--screen-from), at the tune seeds, as time allows.
oracle --phases b --seeds 29,30,31 --screen-from "$R/decision_oracle.jsonl"
