#!/bin/bash
# The oracle, round 14 (docs/benchmarks.md): the test split's reading at the
# end counted in the predicted time (6eda90a). Held out, fixed before any of
# its runs: small_cnn to 83% at seeds 41-43 (run by no earlier round),
# `tula tune --objective` knee, fastest and cheapest, each job from round 13's
# history of crossings (its nine small_cnn jobs added), adding its own; then
# LeNet-5 to 86% (at most 12 epochs), knee, at seeds 26-28, from round 13's
# history of that case. Graded: the whole job at the plan and the remaining
# time at half (bench/remaining_at_half.py --before-final-test, the same jobs
# predicted without the final test). Resumable: decision_oracle.py skips rows
# already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round14.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" "$@"; }
history="$R/decision_oracle_round14/history.jsonl"
mkdir -p "$R/decision_oracle_round14"
[ -e "$history" ] || cp "$R/decision_oracle_round13/history.jsonl" "$history"
oracle --work /tmp/tula-oracle-round14 --out "$R/decision_oracle_round14.jsonl" --phases tune \
  --objectives knee,fastest,cheapest --seeds 41,42,43 --tune-extra="--history $history"
lenet_history="$R/decision_oracle_round14_lenet86/history.jsonl"
mkdir -p "$R/decision_oracle_round14_lenet86"
[ -e "$lenet_history" ] || cp "$R/decision_oracle_round13_lenet86/history.jsonl" "$lenet_history"
oracle --work /tmp/tula-oracle-round14-lenet --out "$R/decision_oracle_round14_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --phases tune --objectives knee --seeds 26,27,28 --tune-extra="--history $lenet_history"
