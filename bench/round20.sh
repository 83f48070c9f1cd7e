#!/bin/bash
# The oracle, round 20 (docs/benchmarks.md): the headline on one node side by
# side. "The headline on one node" ran (a)-(d) phase by phase with the code of
# 7c7c490; here the same four on this machine alone (tune's local resources
# and backend, billed whole), each seed running all four one after another,
# the order rotated by seed (--one-node --phases headline). No change to tula
# (the build of ca460a1).
# Held out, fixed before any run: small_cnn to 83% at seeds 72-74 (none run by
# an earlier round); (a) 1 worker at 128 with SGD 0.05; (b) 2 x 1024 with SGD,
# linear scaling and a 0.5-epoch warmup at the rate round 1 screened on the
# validation split for global batch 2048 (--screen-from); (d) 2 workers at 32
# with AGS, that section's measured oracle; (c) with no job history, the first
# job of a setup on this machine, as in that section.
# Resumable: decision_oracle.py skips rows already in its --out.
#   scripts/emulated-cluster stop   (nothing else running)
#   TULA=path/to/tula bench/round20.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --one-node \
  --work /tmp/tula-oracle-round20 --out "$R/decision_oracle_round20_one_node.jsonl" --phases headline \
  --seeds 72,73,74 --headline-knee local:2:32 --screen-from "$R/decision_oracle.jsonl"
