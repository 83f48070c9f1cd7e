#!/usr/bin/python3
"""The remaining-time error at half the run, counted in evaluation intervals
(docs/notebook/round-09.md, "The oracle, round 9"). A job to a target stops at the
first evaluation at or above it, so its remaining time moves in steps of one
evaluation interval (the job's training and one evaluation, a quarter epoch
here); a forecast one evaluation early or late is off by one interval over
the intervals left. Per tune job of the given rows: the time left at half
its run (measured), how many intervals that is (the median interval between
the job's evaluations), the prediction's error in percent and in intervals,
and what one interval is of the time left; then per case the medians.

  bench/remaining_in_intervals.py [ROWS.jsonl ...]   (default: rounds 5-8's with-change rows and round 9's)
"""
import argparse
import glob
import json
import os
import statistics

from pilot_goes_on import rows

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT = sorted(f for f in glob.glob(os.path.join(HERE, "results", "decision_oracle_round[5-9]*.jsonl"))
                 if "_before" not in f and "_axis" not in f)


def at_half(row):
    """(measured remaining s, interval s, error, predicted remaining s) at half the run, or None where the report
    has none."""
    rep = json.load(open(os.path.join(ROOT, row["report"])))
    times = [e["t_s"] for e in rep.get("evaluations", [])]
    half = [x for x in rep.get("remaining_error") or [] if x["fraction"] == 0.5]
    if len(times) < 3 or not half:
        return None
    interval = statistics.median(b - a for a, b in zip(times, times[1:]))
    return half[0]["measured_remaining_s"], interval, half[0]["error"], half[0]["predicted_remaining_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rows", nargs="*", default=DEFAULT)
    a = p.parse_args()
    print("| rows | model | objective | seed | left at half | interval | intervals left | error | error in intervals "
          "| one interval of what is left |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    by_model = {}
    for path in a.rows:
        for row in rows(path):
            if row["phase"] != "tune" or not (h := at_half(row)):
                continue
            left, interval, error, predicted = h
            in_intervals = (predicted - left) / interval
            by_model.setdefault(row["model"], []).append((error, in_intervals, left / interval))
            print(f"| {os.path.basename(path)} | {row['model']} | {row.get('objective', '-')} | {row['seed']} | "
                  f"{left:.1f} s | {interval:.1f} s | {left / interval:.1f} | {100 * error:+.0f}% | "
                  f"{in_intervals:+.2f} | {100 * interval / left:.0f}% |")
    print()
    for model, xs in sorted(by_model.items()):
        left = [n for _, _, n in xs]
        print(f"{model}: {len(xs)} jobs; median |error| {100 * statistics.median(abs(e) for e, _, _ in xs):.1f}%, "
              f"median |error| in intervals {statistics.median(abs(i) for _, i, _ in xs):.2f}, "
              f"within one interval {sum(abs(i) <= 1 for _, i, _ in xs)} of {len(xs)}; intervals left at half: "
              f"median {statistics.median(left):.1f} (range {min(left):.1f}-{max(left):.1f}), so one interval is "
              f"{100 / statistics.median(left):.0f}% "
              f"of the median time left")


if __name__ == "__main__":
    main()
