#!/bin/bash
# Added to round 58 after seeing its LeNet-5 rows (docs/benchmarks.md): five
# of six first jobs chose 2 x emu-one at 64 where round 50's grid put the
# knee at 1 x emu-one at 128, and ran 0.70-0.81x (d)'s time with the profile
# included. Whether 2 x emu-one at 64 is the knee on the day: that
# configuration run as (d) (AGS, no profile, no pilot) at the same seeds,
# first jobs' 177-182 and later jobs' 183-185, into a file of its own.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round58_added.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"

/usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" --model lenet5 --target 0.86 --max-epochs 12 \
  --work /tmp/tula-oracle-round58-lenet5-two-nodes --phases headline --headline-methods d \
  --headline-knee emu-one:2:64 --seeds 177,178,179,180,181,182,183,184,185 \
  --out "$R/decision_oracle_round58_lenet5_two_nodes.jsonl"
