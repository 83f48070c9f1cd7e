#!/bin/bash
# The oracle, round 11 (docs/benchmarks.md): the oracle's own spread. Round
# 9's grid has two seeds a configuration, and its knee and cheapest took
# 1.5-1.7x between them, so regret within 5% could not be read off it. The
# grid of round 1 (12 configurations, decision_oracle.py's GRID) again at
# seeds 2, then 3, to small_cnn 83%, nothing else changed; the tables then
# pool round 9's seeds 0-1 with these (--grid-from, comma-separated). Fixed
# before any of its runs. Resumable: decision_oracle.py skips rows already in
# its --out.
#   scripts/emulated-cluster start
#   bench/round11.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/results/decision_oracle_round11_grid.jsonl"
oracle() { /usr/bin/python3 "$here/decision_oracle.py" --work /tmp/tula-oracle-round11 --out "$out" "$@"; }
oracle --phases grid --grid-seeds 2
oracle --phases grid --grid-seeds 3
