#!/usr/bin/python3
"""How often the time that was left fell in the range the job gave for it (docs/benchmarks.md, "The oracle, round
15"): each tune job's watches at 25, 50 and 75% of its run predicted the time left and, toward a target, its 80%
range (tune::Refit::remaining_range, the time left if the crossing lies at the 10% and 90% points of the job's
estimate of it); the job's report keeps both beside the time that really was left (remaining_error), and
decision_oracle.py copies them into its rows.

  bench/remaining_range.py ROWS.jsonl ...
"""
import argparse
import json
import os
import statistics

from bench_common import ROOT

FRACTIONS = (0.25, 0.5, 0.75)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="+")
    args = ap.parse_args()
    print("| rows | objective | seed | at | predicted left | its range | measured left | error | within |")
    print("|---|---|---|---|---|---|---|---|---|")
    within = {f: [] for f in FRACTIONS}
    widths = {f: [] for f in FRACTIONS}
    for path in args.rows:
        name = os.path.relpath(path, os.path.join(ROOT, "bench", "results"))
        for r in map(json.loads, open(path)):
            if r.get("phase") != "tune":
                continue
            for e in r.get("remaining_error") or []:
                low_high = e.get("predicted_range_s")
                if not low_high:
                    continue
                low, high = low_high
                inside = low <= e["measured_remaining_s"] <= high
                within[e["fraction"]].append(inside)
                widths[e["fraction"]].append((high - low) / e["predicted_remaining_s"])
                print(f"| {name} | {r['objective']} | {r['seed']} | {e['fraction']:.0%} | "
                      f"{e['predicted_remaining_s']:.0f} s | {low:.0f}-{high:.0f} s | {e['measured_remaining_s']:.0f} s | "
                      f"{e['error']:+.1%} | {'yes' if inside else 'no'} |")
    print()
    for f in FRACTIONS:
        if within[f]:
            print(f"at {f:.0%} of the run: within its range {sum(within[f])} of {len(within[f])}; the range's width, "
                  f"median {statistics.median(widths[f]):.0%} of the predicted time left")
    every = [x for f in FRACTIONS for x in within[f]]
    if every:
        print(f"all watches: within {sum(every)} of {len(every)} ({sum(every) / len(every):.0%}; the range is 80%)")


if __name__ == "__main__":
    main()
