#!/bin/bash
# The oracle, round 6 (docs/benchmarks.md): evaluations warmed at launch, so
# that the pilot's one evaluation is a warm one like the job's, against the
# code before it, seed by seed in turn. Each arm starts from a copy of round
# 5's history of its case (the jobs with the change of round 5, eleven in
# all). Resumable: decision_oracle.py skips rows already in --out, and a
# history already copied is kept.
#   bench/round6.sh BEFORE_TULA   (the tula binary of the code before)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before_tula="$1"
R="$here/results"
for sfx in "" _before; do
  for c in "" _lenet86; do
    mkdir -p "$R/decision_oracle_round6$c$sfx"
    [ -e "$R/decision_oracle_round6$c$sfx/history.jsonl" ] ||
      cp "$R/decision_oracle_round5$c/history.jsonl" "$R/decision_oracle_round6$c$sfx/history.jsonl"
  done
done
for i in 0 1 2; do
  s=$((i + 17)); l=$((i + 11))
  for arm in after before; do
    if [ "$arm" = after ]; then tula=(); sfx=""; else tula=(--tula "$before_tula"); sfx="_before"; fi
    /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --phases tune --objectives knee --seeds $s --work "/tmp/tula-oracle-round6$sfx" \
      --out "$R/decision_oracle_round6$sfx.jsonl" --tune-extra="--history $R/decision_oracle_round6$sfx/history.jsonl"
    /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --model lenet5 --target 0.86 --max-epochs 12 --phases tune --objectives knee --seeds $l --work "/tmp/tula-oracle-round6$sfx" \
      --out "$R/decision_oracle_round6_lenet86$sfx.jsonl" --tune-extra="--history $R/decision_oracle_round6_lenet86$sfx/history.jsonl"
  done
done
