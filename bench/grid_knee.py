#!/usr/bin/python3
"""The knee of the one-node grid measured at the given seeds, as decision_oracle.py's oracle_choices names it,
printed as TYPE:NODES:BATCH (round 55 runs its headline's (d) there: bench/experiments/round55.json).

  /usr/bin/python3 bench/grid_knee.py --rows bench/results/decision_oracle_round55_one_node.jsonl \
      --front-knee build/bench/tula_front_knee --seeds 184,185
"""
import argparse

from bench_common import read_rows
from decision_oracle import ONE_NODE_GRID, oracle_choices


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", required=True, help="the rows file holding the grid")
    p.add_argument("--front-knee", required=True, help="the tula_front_knee binary (bench/front_knee.cpp)")
    p.add_argument("--seeds", required=True, help="the grid seeds, comma separated")
    args = p.parse_args()
    seeds = {int(s) for s in args.seeds.split(",")}
    rows = [r for r in read_rows(args.rows) if r["phase"] == "grid" and r["seed"] in seeds]
    configs, _, picks, _ = oracle_choices(argparse.Namespace(grid=ONE_NODE_GRID, front_knee=args.front_knee), rows)
    print(":".join(map(str, configs[picks["knee"]])))


if __name__ == "__main__":
    main()
