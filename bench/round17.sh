#!/bin/bash
# The oracle, round 17 (docs/benchmarks.md): the job history counts each
# training curve once (tune::JobHistory::prior_for; before, each seed's knee
# and fastest jobs trained one curve and added two lines). Held out, fixed
# before the change: knee only, so that every job is a curve of its own and
# the range's coverage is counted over independent draws; small_cnn to 83% at
# seeds 50-58 and LeNet-5 to 86% (at most 12 epochs) at seeds 35-43, none run
# by an earlier round, each case from round 16's history of it with the curve
# of each earlier line filled in from the rows that ran it
# (bench/history_curves.py). Graded as rounds 15-16: the range's coverage at
# 25, 50 and 75% of each run (bench/remaining_range.py), the whole job at the
# plan and the remaining time at half.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round17.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" "$@"; }
curves() { /usr/bin/python3 "$here/history_curves.py" "$@" "$R"/decision_oracle_round*.jsonl; }
history="$R/decision_oracle_round17/history.jsonl"
mkdir -p "$R/decision_oracle_round17"
[ -e "$history" ] || curves --history "$R/decision_oracle_round16/history.jsonl" --out "$history"
oracle --work /tmp/tula-oracle-round17 --out "$R/decision_oracle_round17.jsonl" --phases tune \
  --objectives knee --seeds 50,51,52,53,54,55,56,57,58 --tune-extra="--history $history"
lenet_history="$R/decision_oracle_round17_lenet86/history.jsonl"
mkdir -p "$R/decision_oracle_round17_lenet86"
[ -e "$lenet_history" ] || curves --history "$R/decision_oracle_round16_lenet86/history.jsonl" --out "$lenet_history"
oracle --work /tmp/tula-oracle-round17-lenet --out "$R/decision_oracle_round17_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --phases tune --objectives knee --seeds 35,36,37,38,39,40,41,42,43 \
  --tune-extra="--history $lenet_history"
