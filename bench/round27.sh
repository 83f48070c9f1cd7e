#!/bin/bash
# The oracle, round 27 (docs/benchmarks.md): the headline (a)-(d) side by side
# under the code of 70817c8 and after, which no full headline has run:
# round 19's (a)-(d) predate the rule of 21f1c0b (no warmup at or below the
# reference batch) and the plan counting every evaluation; rounds 20 and 24
# ran (a) and (c) only. Held out, fixed before any run: small_cnn to 83% at
# seeds 91-93 (none run by an earlier round); (a) the default, (b) standard
# large batch at the largest configuration with the rate round 1's b-screen
# picked on the validation split (as round 19), (c) the knee, (d) the oracle's
# knee of round 24's grid (1 x emu-one at 128), in rotated order seed by seed;
# (c) from a copy of round 25's history of the case, adding its own.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round27.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round27/history.jsonl"
mkdir -p "$R/decision_oracle_round27"
[ -e "$history" ] || cp "$R/decision_oracle_round25/history.jsonl" "$history"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round27 --out "$R/decision_oracle_round27.jsonl" --phases headline \
  --seeds 91,92,93 --headline-knee emu-one:1:128 --screen-from "$R/decision_oracle.jsonl" \
  --tune-extra="--history $history"
