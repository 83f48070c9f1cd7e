#!/bin/bash
# The oracle, round 22 (docs/benchmarks.md): the headline on one node, side by
# side, under the rule of 21f1c0b (no warmup at the reference batch). The
# one-node headline was last measured one method after another (rows of
# decision_oracle_one_node.jsonl, before the rule). Held out, fixed before any
# run: small_cnn to 83% (at most 5 epochs) on this machine alone (--one-node:
# tune's local resources and backend, the whole machine billed at one price),
# seeds 77-81 (none run by an earlier round), (a) the default, (c) the knee
# and (d) the one-node grid's knee (2 workers x 32, decision_oracle_one_node's
# grid) in rotated order; (b) is not re-run (5.6-5.9x behind (c) there, and
# about 9 minutes a seed). (c) from an empty history of the case, which its
# jobs fill. Nothing else of ours running beside it (no emulated cluster).
# Resumable: decision_oracle.py skips rows already in its --out.
#   TULA=path/to/tula bench/round22.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
history="$R/decision_oracle_round22_one_node/history.jsonl"
mkdir -p "$R/decision_oracle_round22_one_node"
/usr/bin/python3 "$here/decision_oracle.py" --tula "${TULA:-$here/../build/src/tula}" --one-node \
  --work /tmp/tula-oracle-round22-one --out "$R/decision_oracle_round22_one_node.jsonl" \
  --phases headline --headline-methods a,c,d --headline-knee local:2:32 --seeds 77,78,79,80,81 \
  --tune-extra="--history $history"
