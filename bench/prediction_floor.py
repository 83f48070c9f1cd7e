#!/usr/bin/env python3
"""How well any prediction blind to the seed could do (docs/benchmarks/decisions.md, "Where the decisions targets end").

The oracle's rounds run the same configuration, (d) or (a), at many seeds.
Predicting each such run by the median of the other runs of its
configuration (leave one out) knows everything about the configuration and
nothing about the seed or the machine's state that day: its error is the
floor under a plan's whole-job error for that configuration, set by how far
the epochs to the target (crossed at an evaluation every 0.25 epochs) and the
step time move from seed to seed. Printed per configuration: the runs, the
epochs they took, the leave-one-out errors of the time and of the epochs, and
of the time left at each run's half way predicted from the others' median and the
time gone (a watch that knows the configuration and the clock but not the
run's own curve).

  /usr/bin/python3 bench/prediction_floor.py --from-round 50 [--by-round]
"""
import argparse
import glob
import json
import os
import re
import statistics
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
# Fewer runs of a configuration than this leave too few others to take a median of.
MIN_RUNS = 4


def round_of(path):
    m = re.search(r"decision_oracle_round(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else None


def runs(results, from_round, phases, by_round):
    """(model, target, phase, machine, nodes, batch[, round]) -> [(round, seed, total_s, epochs)] of reached
    runs."""
    groups = defaultdict(list)
    for path in sorted(glob.glob(os.path.join(results, "decision_oracle_round*.jsonl"))):
        n = round_of(path)
        if n is None or n < from_round:
            continue
        for line in open(path):
            r = json.loads(line)
            if r.get("phase") not in phases or not r.get("reached") or not r.get("chosen"):
                continue
            c = r["chosen"]
            key = (r["model"], r["target"], r["phase"], c["machine"], c["nodes"], c["batch_per_worker"])
            if by_round:
                key += (n,)
            groups[key].append((n, r["seed"], r["total_s"], r["epochs"]))
    return groups


def medians_of_others(values):
    """For each value, the median of the others (leave one out)."""
    return [statistics.median(values[:i] + values[i + 1:]) for i in range(len(values))]


def leave_one_out(values):
    """Each value's relative error when predicted by the median of the others."""
    return [m / v - 1 for m, v in zip(medians_of_others(values), values)]


def left_at_half(times):
    """Each run's time left at its half way, predicted as the others' median less the time gone: what a watch
    that knows the configuration and the clock, but not the run's own curve, would say there."""
    return [(m - t / 2) / (t / 2) - 1 for m, t in zip(medians_of_others(times), times)]


def summary(errors):
    a = sorted(abs(e) for e in errors)
    return (f"{statistics.median(a):.1%} | {a[-1]:.1%} | {sum(e <= 0.10 for e in a)} of {len(a)} | "
            f"{sum(e > 0.25 for e in a)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--from-round", type=int, default=50, help="only rounds from this one on (their code's speed)")
    ap.add_argument("--phases", default="d,a", help="the methods whose runs are grouped (d: AGS at a fixed "
                    "configuration, a: the default)")
    ap.add_argument("--min-runs", type=int, default=MIN_RUNS)
    ap.add_argument("--by-round", action="store_true", help="each round's runs apart: one day's machine, as a "
                    "plan that has measured the day's step time sees it")
    args = ap.parse_args()
    groups = runs(args.results, args.from_round, set(args.phases.split(",")), args.by_round)
    print("| model, target | method | configuration | runs (rounds) | epochs run: values (count) | time: median "
          "\\|error\\| | largest | within 10% | beyond 25% | epochs: median \\|error\\| | largest | within 10% | "
          "beyond 25% | left at half: median \\|error\\| | largest | within 10% | beyond 25% |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(groups):
        model, target, phase, machine, nodes, batch = key[:6]
        rows = groups[key]
        if len(rows) < args.min_runs:
            continue
        rounds = sorted({r[0] for r in rows})
        times, epochs = [r[2] for r in rows], [r[3] for r in rows]
        counts = defaultdict(int)
        for e in epochs:
            counts[round(e, 2)] += 1
        epochs_text = ", ".join(f"{e:g} ({k})" for e, k in sorted(counts.items()))
        print(f"| {model}, {target:.0%} | {phase} | {nodes} x {machine} at {batch} | {len(rows)} "
              f"({rounds[0]}-{rounds[-1]}) | {epochs_text} | {summary(leave_one_out(times))} | "
              f"{summary(leave_one_out(epochs))} | {summary(left_at_half(times))} |")


if __name__ == "__main__":
    main()
