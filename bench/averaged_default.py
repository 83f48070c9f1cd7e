#!/usr/bin/python3
"""The default (a) reading the averaged weights against (a) reading the weights themselves, at the same seeds: the
epochs to the target (the evaluation that saw it), the time, and the final test accuracy of what each stopped with.
The training is the same in both (the average only changes what is evaluated), so the difference is where each saw
the target.
  /usr/bin/python3 bench/averaged_default.py bench/results/decision_oracle_round30.jsonl \
      bench/results/decision_oracle_round30_a0.jsonl"""
import json
import statistics
import sys


def defaults(path):
    return {r["seed"]: r for r in map(json.loads, open(path)) if r["phase"] == "a"}


def main():
    averaged, weights = defaults(sys.argv[1]), defaults(sys.argv[2])
    seeds = sorted(set(averaged) & set(weights))
    print("| seed | epochs: averaged / weights | time: averaged / weights | ratio | final test accuracy: averaged / "
          "weights |")
    print("|---|---|---|---|---|")
    ratios = []
    for s in seeds:
        a, w = averaged[s], weights[s]
        ratios.append(w["time_s"] / a["time_s"])
        print(f"| {s} | {a['epochs']:.2f} / {w['epochs']:.2f} | {a['time_s']:.0f} / {w['time_s']:.0f} s | "
              f"{ratios[-1]:.2f}x | {a['final_accuracy']:.2%} / {w['final_accuracy']:.2%} |")
    med = statistics.median
    print(f"\n{len(seeds)} seeds: epochs median {med(averaged[s]['epochs'] for s in seeds):.2f} averaged against "
          f"{med(weights[s]['epochs'] for s in seeds):.2f}; time (weights / averaged) ratio of medians "
          f"{med(weights[s]['time_s'] for s in seeds) / med(averaged[s]['time_s'] for s in seeds):.2f}x, median of "
          f"pair ratios {med(ratios):.2f}x; fewer epochs at {sum(averaged[s]['epochs'] < weights[s]['epochs'] for s in seeds)}, "
          f"as many at {sum(averaged[s]['epochs'] == weights[s]['epochs'] for s in seeds)}, more at "
          f"{sum(averaged[s]['epochs'] > weights[s]['epochs'] for s in seeds)}")


if __name__ == "__main__":
    main()
