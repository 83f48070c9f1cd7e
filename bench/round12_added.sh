#!/bin/bash
# The oracle, round 12, added after seeing its tune jobs (docs/benchmarks.md):
# all nine chose 2 x emu-one at 64 per worker (global 128), a configuration
# the grid lacks, and all beat the grid's fastest in time; an oracle that
# cannot pick what the jobs ran grades them against less than the best. So
# the grid gains 2 x emu-one at 64 and 1 x emu-one at 64 (the knee's node
# count at the same per-worker batch), at that day's seeds 2, 3 and 4, into
# round 11's grid file; the tables are printed with and without them
# (--grid-add). Fixed before its runs; resumable as round12.sh.
#   scripts/emulated-cluster start
#   bench/round12_added.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
/usr/bin/python3 "$here/decision_oracle.py" --work /tmp/tula-oracle-round12 \
  --out "$here/results/decision_oracle_round11_grid.jsonl" --phases grid --grid-seeds 2,3,4 \
  --grid-add emu-one:2:64,emu-one:1:64
