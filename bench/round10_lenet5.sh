#!/bin/bash
# The oracle, round 10, second case (docs/benchmarks.md): as bench/round10.sh
# (the pilot placed by the objective against the code before it, `tula tune
# --objective cheapest`, the arms' order alternated by seed), on LeNet-5 to
# 86% at held-out seeds 20-22, run by no earlier round. Both arms start from
# a copy of round 8's history of the case, each adding its own. Written
# before any of its runs, while small_cnn's ran.
#   scripts/emulated-cluster start
#   bench/round10_lenet5.sh BEFORE_TULA   (the tula binary of the code before)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before_tula="$1"
R="$here/results"
for sfx in "" _before; do
  mkdir -p "$R/decision_oracle_round10_lenet86$sfx"
  [ -e "$R/decision_oracle_round10_lenet86$sfx/history.jsonl" ] ||
    cp "$R/decision_oracle_round8_lenet86/history.jsonl" "$R/decision_oracle_round10_lenet86$sfx/history.jsonl"
done
tune_arm() {  # arm seed
  local arm="$1" seed="$2" tula=() sfx=""
  if [ "$arm" = before ]; then tula=(--tula "$before_tula"); sfx="_before"; fi
  /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --model lenet5 --target 0.86 --max-epochs 12 --phases tune \
    --objectives cheapest --seeds "$seed" --work "/tmp/tula-oracle-round10$sfx" \
    --out "$R/decision_oracle_round10_lenet86$sfx.jsonl" \
    --tune-extra="--history $R/decision_oracle_round10_lenet86$sfx/history.jsonl"
}
for i in 0 1 2; do
  if [ $((i % 2)) = 0 ]; then order="after before"; else order="before after"; fi
  for arm in $order; do tune_arm "$arm" $((i + 20)); done
done
