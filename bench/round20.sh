#!/bin/bash
# The oracle, round 20 (docs/benchmarks.md): no warmup at the reference batch.
# Round 19 ran the headline side by side: tune's knee (2 x emu-one at 64,
# B = 128, AGS with a 0.5-epoch warmup from a rate of 0) took 1.75 epochs on
# every seed where the default (1 x emu-one at 128, SGD 0.05, no warmup) took
# 1.00-1.50 and AGS at the default's configuration with the warmup 1.25-1.75.
# The change: a launch at or below --reference-batch trains at the tuned rate
# from its first step (tune::launch_warmup_epochs). Development seeds 100-103
# (`tula train`, 2 x 64, validation split; bench/warmup_at_reference.py): AGS
# to 83% in 1.25-1.50 epochs without the warmup against 1.50-2.00 with it
# (first written here as 1.50-1.75, read before the epoch-end readings were
# counted; corrected while the round ran, nothing it runs changed).
# Held out, fixed before any run: small_cnn to 83% at seeds 72-76 (none run
# by an earlier round), (a) and (c) side by side, the order rotated by seed,
# as round 19 ran them. The job history's setup changes with the rule (the
# curves do), so (c) starts from an empty history that its jobs fill.
# (This file first held a one-node headline at the same seeds, never run.)
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster start
#   TULA=path/to/tula bench/round20.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round20/history.jsonl"
mkdir -p "$R/decision_oracle_round20"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" \
  --work /tmp/tula-oracle-round20 --out "$R/decision_oracle_round20.jsonl" --phases headline \
  --headline-methods a,c --seeds 72,73,74,75,76 --tune-extra="--history $history"
