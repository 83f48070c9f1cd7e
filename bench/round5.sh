#!/bin/bash
# The oracle, round 5 (docs/benchmarks.md): the running configuration timed
# as the clock does, against the code before it, seed by seed in turn. Each
# arm starts from a copy of round 4's history of its case, so that every job
# plans with earlier jobs' epochs. Resumable: decision_oracle.py skips rows
# already in --out.
#   bench/round5.sh BEFORE_TULA   (the tula binary of the code before)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before_tula="$1"
R="$here/results"
for i in 0 1 2 3 4; do
  s=$((i + 12)); l=$((i + 6))
  for arm in after before; do
    if [ "$arm" = after ]; then tula=(); sfx=""; else tula=(--tula "$before_tula"); sfx="_before"; fi
    /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --phases tune --objectives knee --seeds $s \
      --out "$R/decision_oracle_round5$sfx.jsonl" --tune-extra="--history $R/decision_oracle_round5$sfx/history.jsonl"
    /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --model lenet5 --target 0.86 --max-epochs 12 --phases tune --objectives knee --seeds $l \
      --out "$R/decision_oracle_round5_lenet86$sfx.jsonl" --tune-extra="--history $R/decision_oracle_round5_lenet86$sfx/history.jsonl"
  done
done
