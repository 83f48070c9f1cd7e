#!/bin/bash
# The oracle, round 36 (docs/benchmarks.md): the knee objective graded again
# under the code as it stands (since round 31: the cheapest's pilot placement,
# the resume fix, a cached profile read in the tune process). Round 31 put the
# knee within 5% of the oracle's knee at ten of ten later jobs, each paying
# 0.6-0.9 s to read its cached profile.
# Held out, fixed before any run: `tula tune --objective knee` on small_cnn to
# 83% (at most 5 epochs) at seeds 127-129 and LeNet-5 to 86% (at most 12
# epochs) at seeds 104-108, none run by an earlier round; (a) the default, (c)
# the knee and (d) the oracle's knee (1 x emu-one at 128, AGS, as the grid
# trains it) side by side in rotated order (decision_oracle.py's headline).
# Later jobs of their setup: the quick profile measured once into the round's
# cache first. Histories: copies of round 35's (the same setup, every job of
# rounds 30-35 on it).
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round36.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
source "$here/round_common.sh"
for model in lenet5 small_cnn; do
  round_case "$model" 36 35 127,128,129 104,105,106,107,108
  round_setup "$model" "$work" "$name" "$source_history"
  /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work" --profile-cache \
    --phases headline --headline-methods a,c,d --seeds "$seeds" --out "$R/$name.jsonl" \
    --tune-extra="--history $R/$name/history.jsonl"
done
