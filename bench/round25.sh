#!/bin/bash
# The oracle, round 25 (docs/benchmarks.md): tune's choice after 70817c8 (the
# plan's front counts every evaluation the job makes, four an epoch at the
# default --eval-every-epochs 0.25, where it counted one), graded against the
# grid round 24 measured the same day (bench/results/decision_oracle_round24.jsonl,
# seeds 85 and 86).
# Held out, fixed before any run: small_cnn to 83% at seeds 88-90 (none run by
# an earlier round); tune --objective knee and fastest seed by seed, then the
# cheapest objective at 88-90 (last, about four minutes a job). Tune jobs from
# a copy of round 24's history of the case (rounds 20, 23 and 24), adding
# their own.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round25.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round25/history.jsonl"
mkdir -p "$R/decision_oracle_round25"
[ -e "$history" ] || cp "$R/decision_oracle_round24/history.jsonl" "$history"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round25 --out "$R/decision_oracle_round25.jsonl" --seeds 88,89,90 \
  --tune-extra="--history $history" "$@"; }
oracle --phases tune --objectives knee,fastest
oracle --phases tune --objectives cheapest
