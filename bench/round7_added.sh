#!/bin/bash
# Round 7's knee against the default (a), three more held-out small_cnn seeds
# (23-25), added after seeds 20-22 were seen (docs/benchmarks.md, "The oracle,
# round 7"): the code with the change only, from the same history file as its
# seeds 20-22 (which holds their jobs by now), (a) beside each seed.
# Resumable, as round7.sh.
#   scripts/emulated-cluster start; bench/round7_added.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
for s in 23 24 25; do
  /usr/bin/python3 "$here/decision_oracle.py" --phases tune --objectives knee --seeds $s --work /tmp/tula-oracle-round7 \
    --out "$R/decision_oracle_round7.jsonl" --tune-extra="--history $R/decision_oracle_round7/history.jsonl"
  /usr/bin/python3 "$here/decision_oracle.py" --phases a --seeds $s --work /tmp/tula-oracle-round7 \
    --out "$R/decision_oracle_round7.jsonl"
done
