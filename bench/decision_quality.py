#!/usr/bin/python3
"""Decision quality on a measured grid: the configuration Tula's predictions
pick against the best one measured (the oracle), per model and objective.

Reads the rows bench/prediction_error.py wrote (each held-out configuration
with its predicted and measured times) and, per model:
- fastest epoch: among all configurations, the one with the lowest predicted
  epoch time (per-sample throughput, the same data set) against the lowest
  measured; the gap is how much slower the chosen one measured;
- fastest split of a global batch: for each global batch reached by two or
  more (workers, per-worker batch) splits, the predicted-best split against
  the measured-best.
On one machine every configuration costs the same per hour, so the cheapest
choice is the fastest one and is not listed apart.

  bench/decision_quality.py [--rows bench/results/prediction_error.jsonl]
"""
import argparse
import collections
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def per_sample(r, key):
    return r[key] / (r["batch_per_worker"] * r["workers"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default=os.path.join(HERE, "results", "prediction_error.jsonl"),
                   help="rows file(s), comma-separated; a model in several files is taken from the first")
    args = p.parse_args()
    rows = []
    for path in args.rows.split(","):
        these = [json.loads(line) for line in open(path) if line.strip()]
        these = [r for r in these if "note" not in r]  # a note marks a run that is not a valid measurement
        taken = {r["model"] for r in rows}
        rows += [r for r in these if r["model"] not in taken]
    by_model = collections.defaultdict(list)
    for r in rows:
        if r.get("nodes", 1) == 1:
            by_model[(r["model"], r.get("profile", "quick"))].append(r)
    print("| model | objective | choices | picked (N, b) | oracle (N, b) | gap |")
    print("|---|---|---|---|---|---|")
    gaps = []
    for (name, effort), rs in by_model.items():
        model = f"{name} ({effort} profile)"
        # Time per sample: an epoch of the same data set takes this times its size.
        pick = min(rs, key=lambda r: per_sample(r, "predicted_iter_s"))
        best = min(rs, key=lambda r: per_sample(r, "measured_iter_s"))
        gap = per_sample(pick, "measured_iter_s") / per_sample(best, "measured_iter_s") - 1
        gaps.append(gap)
        print(f"| {model} | fastest epoch | {len(rs)} | ({pick['workers']}, {pick['batch_per_worker']}) | "
              f"({best['workers']}, {best['batch_per_worker']}) | {100 * gap:.1f}% |")
        splits = collections.defaultdict(list)
        for r in rs:
            splits[r["workers"] * r["batch_per_worker"]].append(r)
        for batch, group in sorted(splits.items()):
            if len(group) < 2:
                continue
            pick = min(group, key=lambda r: r["predicted_iter_s"])
            best = min(group, key=lambda r: r["measured_iter_s"])
            gap = pick["measured_iter_s"] / best["measured_iter_s"] - 1
            gaps.append(gap)
            print(f"| {model} | fastest split of B={batch} | {len(group)} | ({pick['workers']}, "
                  f"{pick['batch_per_worker']}) | ({best['workers']}, {best['batch_per_worker']}) | {100 * gap:.1f}% |")
    if gaps:
        print(f"\n{sum(g == 0 for g in gaps)} of {len(gaps)} decisions equal the oracle's; "
              f"mean gap {100 * sum(gaps) / len(gaps):.1f}%, worst {100 * max(gaps):.1f}%")


if __name__ == "__main__":
    main()
