#!/bin/bash
# The oracle, round 18 (docs/benchmarks.md): the prior's spread carried onto
# the job's own progress axis by the map itself (tune::Refit::prior_target;
# before, the spread of the grown axis was carried unchanged, about 0.06 for
# small_cnn's 0.10 in epochs, and the time left's range came out about half
# as wide as the history's spread says). Held out, fixed before the change:
# as round 17, knee only, small_cnn to 83% at seeds 59-66 and LeNet-5 to 86%
# (at most 12 epochs) at seeds 44-51, none run by an earlier round, each case
# from round 17's history of it (its curves named by the jobs themselves).
# Graded as rounds 15-17.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round18.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" "$@"; }
history="$R/decision_oracle_round18/history.jsonl"
mkdir -p "$R/decision_oracle_round18"
[ -e "$history" ] || cp "$R/decision_oracle_round17/history.jsonl" "$history"
oracle --work /tmp/tula-oracle-round18 --out "$R/decision_oracle_round18.jsonl" --phases tune \
  --objectives knee --seeds 59,60,61,62,63,64,65,66 --tune-extra="--history $history"
lenet_history="$R/decision_oracle_round18_lenet86/history.jsonl"
mkdir -p "$R/decision_oracle_round18_lenet86"
[ -e "$lenet_history" ] || cp "$R/decision_oracle_round17_lenet86/history.jsonl" "$lenet_history"
oracle --work /tmp/tula-oracle-round18-lenet --out "$R/decision_oracle_round18_lenet86.jsonl" --model lenet5 \
  --target 0.86 --max-epochs 12 --phases tune --objectives knee --seeds 44,45,46,47,48,49,50,51 \
  --tune-extra="--history $lenet_history"
