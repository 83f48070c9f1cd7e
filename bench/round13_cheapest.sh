#!/bin/bash
# The oracle, round 13, the cheapest objective (docs/benchmarks.md): as
# round13.sh, after it, for `tula tune --objective cheapest` at the held-out
# seeds 38-40, between two runs of round 12's day oracle for that objective
# (1 x emu-half at 128), from the same history. Fixed before any of its runs;
# resumable (decision_oracle.py skips rows already in its --out).
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round13_cheapest.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round13/history.jsonl"
[ -e "$history" ] || { echo "run bench/round13.sh first: it makes $history" >&2; exit 1; }
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --work /tmp/tula-oracle-round13 \
  --out "$R/decision_oracle_round13.jsonl" --phases paired --paired cheapest=emu-half:1:128 --seeds 38,39,40 \
  --tune-extra="--history $history"
