#!/usr/bin/env python3
"""The oracle's own spread (docs/notebook/round-11.md, "The oracle, round 11"): round 9's grid (small_cnn to 83%, seeds 0
and 1) and round 11's (the same 12 configurations at seeds 2 and 3, another day; round 12 adds seed 4 on that day).

Prints, per configuration, the seconds per epoch of each seed and the ratio of round 11's median to round 9's (the
machine's drift between the days: a seed moves the epochs to the target, not the time an epoch takes), the epochs
each seed took to the target, and then what the planner's rule picks from the grid's median time and cost (the
oracle of each objective) with round 9's seeds, round 11's, that day's three and all of them (each set once all its
rows are in). The drift compares seeds 2 and 3 with 0 and 1.

  /usr/bin/python3 bench/grid_spread.py [--seeds 0,1,2]
"""
import argparse
import json
import os
import statistics

from bench_common import ROOT
from decision_oracle import GRID, OBJECTIVES, describe, oracle_choices

RESULTS = os.path.join(ROOT, "bench", "results")
ROUND9 = os.path.join(RESULTS, "decision_oracle_round9.jsonl")
ROUND11 = os.path.join(RESULTS, "decision_oracle_round11_grid.jsonl")


def grid(path):
    return [r for r in map(json.loads, open(path)) if r["phase"] == "grid"] if os.path.exists(path) else []


def config(r):
    return (r["machine"], r["nodes"], r["batch"])


def per_epoch(r):
    return r["time_s"] / r["epochs"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", help="only these grid seeds (default: every seed in the rows)")
    only = p.parse_args().seeds
    rows = grid(ROUND9) + grid(ROUND11)
    if only:
        rows = [r for r in rows if r["seed"] in {int(x) for x in only.split(",")}]
    by = {}
    for r in rows:
        by.setdefault(config(r), []).append(r)
    print("| configuration | s/epoch per seed | round 11 / round 9 (median s/epoch) | epochs per seed |")
    print("|---|---|---|---|")
    drifts = []
    for c in GRID:
        rs = sorted(by.get(c, []), key=lambda r: r["seed"])
        if not rs:
            continue
        old = [per_epoch(r) for r in rs if r["seed"] in (0, 1)]
        new = [per_epoch(r) for r in rs if r["seed"] in (2, 3)]
        drift = statistics.median(new) / statistics.median(old) if old and new else None
        if drift:
            drifts.append(drift)
        print(f"| {describe(c)} | " + ", ".join(f"s{r['seed']} {per_epoch(r):.0f}" for r in rs) + " | "
              + (f"{drift:.3f}" if drift else "-") + " | "
              + ", ".join(f"s{r['seed']} {r['epochs']:.2f}" + ("" if r["reached"] else " (missed)") for r in rs) + " |")
    if drifts:
        print(f"\nround 11 / round 9 seconds per epoch over {len(drifts)} configurations: median {statistics.median(drifts):.3f}, "
              f"range {min(drifts):.3f} to {max(drifts):.3f}")
    args = argparse.Namespace(grid=GRID, front_knee=os.path.join(ROOT, "build", "bench", "tula_front_knee"))
    print("\n| seeds | " + " | ".join(OBJECTIVES) + " |")
    print("|---|" + "---|" * len(OBJECTIVES))
    for seeds in ((0, 1), (2,), (2, 3), (0, 1, 2), (0, 1, 2, 3), (2, 3, 4), (0, 1, 2, 3, 4)):
        chosen = [r for r in rows if r["seed"] in seeds and config(r) in GRID]  # round 12's added ones apart
        if {(config(r), r["seed"]) for r in chosen} != {(c, s) for c in GRID for s in seeds}:
            continue  # a seed with rows still to come
        configs, points, picks, _ = oracle_choices(args, chosen)
        cells = [f"{describe(configs[picks[k]])}: {points[picks[k]]['time_s']:.0f} s, {points[picks[k]]['cost']:.5f}"
                 for k in OBJECTIVES]
        print(f"| {', '.join(map(str, seeds))} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
