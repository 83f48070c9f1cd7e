#!/bin/bash
# The oracle, round 8 (docs/benchmarks.md): the plan after the pilot weighed
# as a move from the running pilot (the watch's rule: a move must save more
# than --min-saving net of its restart, without losing more than that on the
# other side), against the code before it (the plan's choice taken as is),
# and the default (a), seed by seed, the two tune arms' order alternated by
# seed. Held out: small_cnn seeds 26-28 and LeNet-5 seeds 17-19, run by no
# earlier round. Both tune arms start from a copy of round 7's history of
# the case (its with-change arm), each adding its own. Resumable:
# decision_oracle.py skips rows already in --out, and a history already
# copied is kept.
#   scripts/emulated-cluster start
#   bench/round8.sh BEFORE_TULA   (the tula binary of the code before)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
before_tula="$1"
R="$here/results"
for sfx in "" _before; do
  for c in "" _lenet86; do
    mkdir -p "$R/decision_oracle_round8$c$sfx"
    [ -e "$R/decision_oracle_round8$c$sfx/history.jsonl" ] ||
      cp "$R/decision_oracle_round7$c/history.jsonl" "$R/decision_oracle_round8$c$sfx/history.jsonl"
  done
done
tune_arm() {  # arm seed-index
  local arm="$1" i="$2" tula=() sfx=""
  if [ "$arm" = before ]; then tula=(--tula "$before_tula"); sfx="_before"; fi
  /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --phases tune --objectives knee --seeds $((i + 26)) \
    --work "/tmp/tula-oracle-round8$sfx" --out "$R/decision_oracle_round8$sfx.jsonl" \
    --tune-extra="--history $R/decision_oracle_round8$sfx/history.jsonl"
  /usr/bin/python3 "$here/decision_oracle.py" "${tula[@]}" --model lenet5 --target 0.86 --max-epochs 12 --phases tune \
    --objectives knee --seeds $((i + 17)) --work "/tmp/tula-oracle-round8$sfx" \
    --out "$R/decision_oracle_round8_lenet86$sfx.jsonl" \
    --tune-extra="--history $R/decision_oracle_round8_lenet86$sfx/history.jsonl"
}
for i in 0 1 2; do
  if [ $((i % 2)) = 0 ]; then order="after before"; else order="before after"; fi
  for arm in $order; do tune_arm "$arm" "$i"; done
  /usr/bin/python3 "$here/decision_oracle.py" --phases a --seeds $((i + 26)) --work /tmp/tula-oracle-round8 \
    --out "$R/decision_oracle_round8.jsonl"
  /usr/bin/python3 "$here/decision_oracle.py" --model lenet5 --target 0.86 --max-epochs 12 --phases a \
    --seeds $((i + 17)) --work /tmp/tula-oracle-round8 --out "$R/decision_oracle_round8_lenet86.jsonl"
done
