#!/bin/bash
# The oracle, round 13 (docs/benchmarks.md): regret graded within pairs, and
# the remaining time with a history of crossings and the mean stop.
# Held out, fixed before any of its runs: small_cnn to 83% at seeds 38-40 (run
# by no earlier round). For each objective (knee, then fastest) and seed: the
# oracle's configuration for that objective on round 12's day (knee 1 x
# emu-one at 128, fastest 2 x emu-one at 32), `tula tune --objective` at that
# seed, the same configuration again; the regret is the job's against the
# geometric mean of the two around it. Each job starts from round 12's job
# history converted to crossings (bench/history_crossings.py), adding its own.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round13.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
out="$R/decision_oracle_round13.jsonl"
history="$R/decision_oracle_round13/history.jsonl"
mkdir -p "$R/decision_oracle_round13"
[ -e "$history" ] || /usr/bin/python3 "$here/history_crossings.py" --history "$R/decision_oracle_round12/history.jsonl" \
  --target 0.83 --out "$history"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round13 --out "$out" "$@"; }
oracle --phases paired --paired knee=emu-one:1:128 --seeds 38,39,40 --tune-extra="--history $history"
oracle --phases paired --paired fastest=emu-one:2:32 --seeds 38,39,40 --tune-extra="--history $history"
