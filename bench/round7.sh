#!/bin/bash
# The oracle, round 7 (docs/benchmarks.md): the pilot as the job's first
# launch, its workers going on where the plan keeps its configuration,
# against the code before it (the pilot stopped, the plan made, the job
# relaunched), and the default (a), seed by seed, the two tune arms' order
# alternated by seed. Held out: small_cnn seeds 20-22 and LeNet-5 seeds 14-16,
# run by no earlier round. Each tune arm starts from a copy of round 6's
# history of its case (the jobs with round 6's change). Resumable:
# decision_oracle.py skips rows already in --out, and a history already
# copied is kept.
#   scripts/emulated-cluster start
#   bench/round7.sh BEFORE_TULA   (the tula binary of the code before)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before_tula="$1"
R="$here/results"
for sfx in "" _before; do
  for c in "" _lenet86; do
    mkdir -p "$R/decision_oracle_round7$c$sfx"
    [ -e "$R/decision_oracle_round7$c$sfx/history.jsonl" ] ||
      cp "$R/decision_oracle_round6$c/history.jsonl" "$R/decision_oracle_round7$c$sfx/history.jsonl"
  done
done
tune_arm() {  # arm seed-index
  local arm="$1" i="$2" tula=() sfx=""
  if [ "$arm" = before ]; then tula=(--tula "$before_tula"); sfx="_before"; fi
  /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --phases tune --objectives knee --seeds $((i + 20)) \
    --work "/tmp/tula-oracle-round7$sfx" --out "$R/decision_oracle_round7$sfx.jsonl" \
    --tune-extra="--history $R/decision_oracle_round7$sfx/history.jsonl"
  /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --model lenet5 --target 0.86 --max-epochs 12 --phases tune \
    --objectives knee --seeds $((i + 14)) --work "/tmp/tula-oracle-round7$sfx" \
    --out "$R/decision_oracle_round7_lenet86$sfx.jsonl" \
    --tune-extra="--history $R/decision_oracle_round7_lenet86$sfx/history.jsonl"
}
for i in 0 1 2; do
  if [ $((i % 2)) = 0 ]; then order="after before"; else order="before after"; fi
  for arm in $order; do tune_arm "$arm" "$i"; done
  /usr/bin/python3 "$here/decision_oracle.py" --phases a --seeds $((i + 20)) --work /tmp/tula-oracle-round7 \
    --out "$R/decision_oracle_round7.jsonl"
  /usr/bin/python3 "$here/decision_oracle.py" --model lenet5 --target 0.86 --max-epochs 12 --phases a \
    --seeds $((i + 14)) --work /tmp/tula-oracle-round7 --out "$R/decision_oracle_round7_lenet86.jsonl"
done
