#!/bin/bash
# The oracle, round 19 (docs/benchmarks.md): the headline side by side. Until
# now (a) the default, (b) standard large batch, (c) the knee tune job and (d)
# the oracle's knee ran as separate phases, hours apart (round 12: (c) at
# 03:22-03:55, (a) at 04:33-04:45), while the host's speed moves within a day by
# more than the methods differ. Here each seed runs all four one after
# another, the order rotated by seed (--phases headline). No change to tula
# (the build of ca460a1, as round 18's 7354cb8 plus the replay's mends).
# Held out, fixed before any run: small_cnn to 83% at seeds 67-71 (none run
# by an earlier round); (b) at the rate round 1 screened on the validation
# split for global batch 2048 (--screen-from); (d) 1 x emu-one at 128 with
# AGS, the oracle's knee of the day's grid (round 11's seeds 2-4); (c) from
# round 18's history of the case, adding its own lines.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round19.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round19/history.jsonl"
mkdir -p "$R/decision_oracle_round19"
[ -e "$history" ] || cp "$R/decision_oracle_round18/history.jsonl" "$history"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round19 --out "$R/decision_oracle_round19.jsonl" --phases headline \
  --seeds 67,68,69,70,71 --headline-knee emu-one:1:128 --screen-from "$R/decision_oracle.jsonl" \
  --tune-extra="--history $history"
