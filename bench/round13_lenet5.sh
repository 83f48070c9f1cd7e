#!/bin/bash
# The oracle, round 13, its second case (docs/benchmarks.md): LeNet-5 to 86%
# (at most 12 epochs), `tula tune --objective knee` at held-out seeds 23-25
# (run by no earlier round), each job from round 10's history of the case (the
# code kept then) converted to crossings (bench/history_crossings.py), adding
# its own: the whole job at the plan and the remaining time at half, where
# round 10 missed 10% (11.3%). Fixed before any of its runs; run after
# round13.sh. Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round13_lenet5.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
out="$R/decision_oracle_round13_lenet86.jsonl"
history="$R/decision_oracle_round13_lenet86/history.jsonl"
mkdir -p "$R/decision_oracle_round13_lenet86"
[ -e "$history" ] || /usr/bin/python3 "$here/history_crossings.py" \
  --history "$R/decision_oracle_round10_lenet86_before/history.jsonl" --target 0.86 --out "$history"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --work /tmp/tula-oracle-round13-lenet \
  --out "$out" --model lenet5 --target 0.86 --max-epochs 12 --phases tune --objectives knee --seeds 23,24,25 \
  --tune-extra="--history $history"
