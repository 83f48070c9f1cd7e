#!/bin/bash
# The oracle, round 12 (docs/benchmarks.md): the tune jobs graded against a
# grid measured the same day. Round 11 measured round 9's grid at seeds 2 and
# 3 on one day (this one); this round runs, on the same day, `tula tune
# --objective knee|fastest|cheapest` with the code kept after round 10 at
# held-out seeds 35-37 of small_cnn to 83% (run by no earlier round), the
# objectives' order rotated by seed, each job from a copy of round 10's
# history of the case (its before arm, the code kept), adding its own; then
# the grid at seed 4 (into round 11's grid file, the file of this day's grid);
# then the default (a) at the tune seeds, as time allows.
# The regret is read against the oracle of this day's grid seeds (2, 3, 4)
# and, beside it, of all five. Fixed before any of its runs. Resumable:
# decision_oracle.py skips rows already in its --out, and a history already
# copied is kept.
#   scripts/emulated-cluster start
#   bench/round12.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
out="$R/decision_oracle_round12.jsonl"
history="$R/decision_oracle_round12/history.jsonl"
mkdir -p "$R/decision_oracle_round12"
[ -e "$history" ] || cp "$R/decision_oracle_round10_before/history.jsonl" "$history"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --work /tmp/tula-oracle-round12 "$@"; }
objectives=(knee fastest cheapest)
for i in 0 1 2; do
  rotated=("${objectives[@]:i}" "${objectives[@]:0:i}")
  oracle --out "$out" --phases tune --objectives "$(IFS=,; echo "${rotated[*]}")" --seeds $((i + 35)) \
    --tune-extra="--history $history"
done
oracle --out "$R/decision_oracle_round11_grid.jsonl" --phases grid --grid-seeds 4
oracle --out "$out" --phases a --seeds 35,36,37
