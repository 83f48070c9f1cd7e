#!/bin/bash
# The oracle, round 55 (docs/benchmarks.md): the headline on one node, (a)-(d)
# on this machine alone, which no round has run since the first one ("The
# headline on one node", before OpenBLAS and every change since). Fixed before
# its runs, at held-out small_cnn seeds none ran before, to 83% (at most 5
# epochs; (b) at most 8):
# 1. The one-node grid (ONE_NODE_GRID: 1 and 2 workers at 32, 128 and 512 per
#    worker, AGS) at seeds 184 and 185; the oracle's knee is its configuration
#    of least median time (one price for the whole machine: time x cost is
#    time squared, so knee, fastest and cheapest are one configuration), as
#    decision_oracle.py's oracle_choices names it.
# 2. The headline at 184-186, the methods in an order rotated by seed: (a) the
#    default (1 worker at 128, SGD 0.05), (b) standard large batch (2 workers
#    at 1024, B = 2048, SGD linear scaling, 0.5-epoch warmup, at the rate round
#    53's screen picked on the validation split for that global batch), (c)
#    `tula tune --objective knee` as a first job (its own profile, no history)
#    and (d) the grid's knee.
# Resumable: decision_oracle.py skips rows already in its --out.
#   TULA=path/to/tula bench/round55.sh   (default: build/src/tula)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
R="$here/results"
tula="${TULA:-$here/../build/src/tula}"
name=decision_oracle_round55_one_node
out="$R/$name.jsonl"
one_node() {
  /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" --one-node --work /tmp/tula-oracle-round55 --out "$out" "$@"
}

one_node --phases grid --grid-seeds 184,185 --seeds 184,185
knee=$(cd "$here" && /usr/bin/python3 - "$out" "$here/../build/bench/tula_front_knee" <<'PY'
import argparse, json, sys
from decision_oracle import ONE_NODE_GRID, oracle_choices
rows = [r for r in map(json.loads, filter(str.strip, open(sys.argv[1]))) if r["phase"] == "grid" and r["seed"] in (184, 185)]
configs, _, picks, _ = oracle_choices(argparse.Namespace(grid=ONE_NODE_GRID, front_knee=sys.argv[2]), rows)
print(":".join(map(str, configs[picks["knee"]])))
PY
)
echo "the one-node grid's knee: $knee"
one_node --phases headline --seeds 184,185,186 --headline-knee "$knee" \
  --screen-from "$R/decision_oracle_round53_headline_small_cnn.jsonl" --b-rates 0.003125,0.00625,0.0125
