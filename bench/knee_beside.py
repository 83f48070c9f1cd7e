#!/usr/bin/python3
"""The knee job beside the default and the oracle's knee at each seed (docs/notebook/round-45-46.md, "The oracle, rounds 45
and 46"): per seed the knee job's whole time and cost (profile and pilot included), (a)'s and (d)'s (training time,
as the grid counts it; --also adds the (d) rows of another file under its own label), each run's time x cost (the
knee's rule since 20a2182), the knee job's ratios to each, and which of the runs has the least time x cost.
Summaries: for each method beside, the median of pair ratios and the ratio of medians of time, and whether the knee
job is ahead by more than the seed spread (its slowest seed faster than that method's fastest, every pair above 1).

  /usr/bin/python3 bench/knee_beside.py bench/results/decision_oracle_round46_small_cnn.jsonl
  /usr/bin/python3 bench/knee_beside.py bench/results/decision_oracle_round46_resnet20.jsonl \
      --also 'd2=bench/results/decision_oracle_round46_resnet20_two_nodes.jsonl'
"""
import argparse
import json
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rows_of(path):
    """The runs of the methods in PATH: (a), (b), the tune job and (d). (b)'s rate screen (round 53 on) is not a run
    to the target, and a grid's runs (round 55's one-node file) are the oracle's measurements, not a method."""
    rows = [json.loads(l) for l in open(path) if l.strip()]
    return [r for r in rows if r["phase"] in ("a", "b", "tune", "d")]


def config_of(row):
    c = row.get("chosen") or {}
    return f"{c.get('nodes')} x {c.get('machine')} at {c.get('batch_per_worker')}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--also", action="append", default=[], help="LABEL=FILE: that file's (d) rows as method LABEL")
    args = p.parse_args()
    runs = {}  # method -> seed -> (time, cost, row)
    for r in rows_of(args.results):
        method = "c" if r["phase"] == "tune" else r["phase"]
        time_s = r["total_s"] if method == "c" else r["time_s"]
        runs.setdefault(method, {})[r["seed"]] = (time_s, r["cost"], r)
    for spec in args.also:
        label, path = spec.split("=", 1)
        for r in rows_of(path):
            if r["phase"] == "d":
                runs.setdefault(label, {})[r["seed"]] = (r["time_s"], r["cost"], r)
    beside = [m for m in runs if m != "c"]
    seeds = sorted(set(runs["c"]).intersection(*(set(runs[m]) for m in beside)))
    header = ["seed", "(c)'s choice"] + [f"({m}) time, cost, time x cost" for m in ["c"] + beside]
    header += [f"(c) / ({m}): time, cost, time x cost" for m in beside] + ["least time x cost"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for s in seeds:
        cells = [str(s), config_of(runs["c"][s][2])]
        for m in ["c"] + beside:
            t, c, r = runs[m][s]
            cells.append(f"{t:.1f} s, {c:.5f}, {t * c:.4f}" + (f" ({config_of(r)})" if m != "c" else ""))
        tc, cc, _ = runs["c"][s]
        for m in beside:
            t, c, _ = runs[m][s]
            cells.append(f"{tc / t:.2f}, {cc / c:.2f}, {tc * cc / (t * c):.2f}")
        least = min(["c"] + beside, key=lambda m: runs[m][s][0] * runs[m][s][1])
        cells.append(f"({least})")
        print("| " + " | ".join(cells) + " |")
    print()
    for m in beside:
        pairs = [runs[m][s][0] / runs["c"][s][0] for s in seeds]
        med = statistics.median(runs[m][s][0] for s in seeds) / statistics.median(runs["c"][s][0] for s in seeds)
        ahead = max(runs["c"][s][0] for s in seeds) < min(runs[m][s][0] for s in seeds) and min(pairs) > 1
        products = [runs["c"][s][0] * runs["c"][s][1] / (runs[m][s][0] * runs[m][s][1]) for s in seeds]
        print(f"({m}) / (c) time over {len(seeds)} seeds: median of pair ratios {statistics.median(pairs):.2f}x "
              f"({', '.join(f'{x:.2f}' for x in pairs)}), ratio of medians {med:.2f}x: "
              f"{'ahead' if ahead else 'not ahead'} by more than the seed spread; (c)'s time x cost over ({m})'s "
              f"{', '.join(f'{x:.2f}' for x in products)} (median {statistics.median(products):.2f})")


if __name__ == "__main__":
    main()
