#!/usr/bin/python3
"""How often the time that was left fell in the range the job gave for it (docs/notebook/round-15-16.md, "The oracle, round
15"): each tune job's watches at 25, 50 and 75% of its run predicted the time left and, toward a target, its 80%
range (tune::Refit::remaining_range, the time left if the crossing lies at the 10% and 90% points of the job's
estimate of it); the job's report keeps both beside the time that really was left (remaining_error), and
decision_oracle.py copies them into its rows.

  bench/remaining_range.py ROWS.jsonl ...
  bench/remaining_range.py --time-model build/bench/tula_remaining_replay ROWS.jsonl ...
      the time model's own error in the time left: every watch of each job (more than 5 s before its end)
      replayed with its own crossing as its prior (log sd 0.01), against the time that was left
  bench/remaining_range.py --recounted build/bench/tula_remaining_replay ROWS.jsonl ...
      every job's range replayed twice at its 25, 50 and 75% watches (today's code): with the prior it ran with, and
      with the prior its history's lines before its own give as tune counts them now, each curve once (the history
      filled in by history_curves.py from the rows beside ROWS)
  bench/remaining_range.py --widened 0.1 ROWS.jsonl ...
      the same table with each range's ends moved out by that share (low x (1 - T), high x (1 + T)): what
      tune::kTimeModelTolerance does, on jobs that ran before it
"""
import argparse
import glob
import json
import os
import statistics
import tempfile

import history_curves
from bench_common import ROOT, command_option, replay_watches
from remaining_at_half import own_crossing

FRACTIONS = (0.25, 0.5, 0.75)


def time_model_errors(replay, paths):
    for path in paths:
        errors = []
        for r in map(json.loads, open(path)):
            if r.get("phase") != "tune":
                continue
            job_dir = command_option(r["command"], "--out")
            own = own_crossing(command_option(r["command"], "--history"), job_dir)
            end = json.load(open(os.path.join(job_dir, "report.json")))["measured"]["time_s"]
            for w in replay_watches(replay, job_dir, ["--prior-epochs", str(own), "--prior-log-sd", "0.01"]):
                left = end - w["t_s"]
                if "replayed_remaining_s" in w and left > 5:
                    errors.append(w["replayed_remaining_s"] / left - 1)
        size = sorted(abs(e) for e in errors)
        signed = sorted(errors)
        at = lambda xs, p: xs[int(p * (len(xs) - 1))]
        print(f"{os.path.relpath(path, os.path.join(ROOT, 'bench', 'results'))}: {len(errors)} watches, the crossing "
              f"known: median |error| {statistics.median(size):.1%}, 80% within {at(size, 0.8):.1%}; 10% and 90% points "
              f"of the error {at(signed, 0.1):+.1%}, {at(signed, 0.9):+.1%}")


def recounted(replay, paths):
    """Coverage of the 80% range, each job replayed with the prior it ran with and with the history recounted."""
    held = {"as it ran": [], "each curve once": []}
    with tempfile.TemporaryDirectory() as tmp:
        filled = {}  # each history, its curves filled in, once
        for path in paths:
            rows_beside = glob.glob(os.path.join(os.path.dirname(os.path.abspath(path)), "decision_oracle_round*.jsonl"))
            by_job = history_curves.rows_by_job(sorted(rows_beside))
            for r in map(json.loads, open(path)):
                if r.get("phase") != "tune" or not r.get("remaining_error"):
                    continue
                job_dir = command_option(r["command"], "--out")
                history = command_option(r["command"], "--history")
                if history not in filled:
                    filled[history] = os.path.join(tmp, f"history-{len(filled)}.jsonl")
                    history_curves.write_lines(history_curves.filled_lines(history, by_job)[0], filled[history])
                arms = {"as it ran": replay_watches(replay, job_dir),
                        "each curve once": replay_watches(replay, job_dir, ["--history", filled[history]])}
                marks = {}
                for arm, watches in arms.items():
                    marks[arm] = ""
                    for e in r["remaining_error"]:
                        w = next(w for w in watches if abs(w["t_s"] - e["t_s"]) < 1e-6)
                        low, high = w["range_s"]
                        inside = low <= e["measured_remaining_s"] <= high
                        held[arm].append(inside)
                        marks[arm] += "y" if inside else "n"
                print(f"| {os.path.basename(path)} | {r['objective']} | {r['seed']} | {marks['as it ran']} | "
                      f"{marks['each curve once']} |")
    print()
    for arm, xs in held.items():
        print(f"{arm}: within {sum(xs)} of {len(xs)} ({sum(xs) / len(xs):.0%})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--time-model", metavar="REPLAY", help="bench/remaining_replay.cpp's program")
    ap.add_argument("--recounted", metavar="REPLAY", help="bench/remaining_replay.cpp's program")
    ap.add_argument("--widened", type=float, default=0.0, metavar="T")
    args = ap.parse_args()
    if args.recounted:
        print("| rows | objective | seed | within at 25/50/75%, as it ran | each curve once |")
        print("|---|---|---|---|---|")
        recounted(args.recounted, args.rows)
        return
    if args.time_model:
        time_model_errors(args.time_model, args.rows)
        return
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
                low, high = low_high[0] * (1 - args.widened), low_high[1] * (1 + args.widened)
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
