#!/bin/bash
# The oracle, round 10 (docs/benchmarks.md): the pilot placed by the
# objective (cheapest: the type where its steps cost least; before: the
# fastest type for every objective), `tula tune --objective cheapest` against
# the code before it, seed by seed, the arms' order alternated by seed.
# Training is deterministic given the seed and the configuration, whichever
# type runs it, so the two arms' pilots train the same steps; what differs is
# where they run, their time and money, and what the plan makes of their
# measurements. Held out: small_cnn seeds 32-34 to 83%, run by no earlier
# round. Both arms start from a copy of round 9's history, each adding its
# own. Resumable: decision_oracle.py skips rows already in --out, and a
# history already copied is kept.
#   scripts/emulated-cluster start
#   bench/round10.sh BEFORE_TULA   (the tula binary of the code before)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before_tula="$1"
R="$here/results"
for sfx in "" _before; do
  mkdir -p "$R/decision_oracle_round10$sfx"
  [ -e "$R/decision_oracle_round10$sfx/history.jsonl" ] ||
    cp "$R/decision_oracle_round9/history.jsonl" "$R/decision_oracle_round10$sfx/history.jsonl"
done
tune_arm() {  # arm seed
  local arm="$1" seed="$2" tula=() sfx=""
  if [ "$arm" = before ]; then tula=(--tula "$before_tula"); sfx="_before"; fi
  /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --phases tune --objectives cheapest --seeds "$seed" \
    --work "/tmp/tula-oracle-round10$sfx" --out "$R/decision_oracle_round10$sfx.jsonl" \
    --tune-extra="--history $R/decision_oracle_round10$sfx/history.jsonl"
}
for i in 0 1 2; do
  if [ $((i % 2)) = 0 ]; then order="after before"; else order="before after"; fi
  for arm in $order; do tune_arm "$arm" $((i + 32)); done
done
