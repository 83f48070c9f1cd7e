#!/usr/bin/python3
"""Prints what bench/peer_weight_average.py's rows say: per seed, the first reading at or above each target on a
quarter-epoch and an eighth-epoch grid, for the weights themselves and each average, and the curve's jitter (the
root mean square of a reading's second difference over sqrt(6): the sd of one reading's own noise where the curve is
locally straight), after 0.45 epochs."""
import collections
import json
import statistics
import sys

KEYS = ["raw", "ema0.98", "ema0.99", "ema0.995"]


def first_at(rows, key, target, per_epoch):
    for r in rows:
        if abs(r["epoch"] * per_epoch - round(r["epoch"] * per_epoch)) > 0.02 * per_epoch:
            continue
        if r[key] >= target:
            return f"{r['epoch']:.3f}"
    return f"not by {rows[-1]['epoch']:.3f}"


def jitter(rows, key):
    a = [r[key] for r in rows if r["epoch"] > 0.45]
    d = [a[i + 1] - 2 * a[i] + a[i - 1] for i in range(1, len(a) - 1)]
    return (statistics.mean(x * x for x in d) / 6) ** 0.5 if d else float("nan")


def main():
    by_seed = collections.defaultdict(list)
    for line in open(sys.argv[1]):
        r = json.loads(line)
        by_seed[r["seed"]].append(r)
    seeds = sorted(by_seed)
    print("| target | readings an epoch | weights | " + " | ".join(f"seed {s}" for s in seeds) + " |")
    print("|---|---|---|" + "---|" * len(seeds))
    for target in (0.83, 0.84):
        for per_epoch in (4, 8):
            for key in KEYS:
                cells = " | ".join(first_at(by_seed[s], key, target, per_epoch) for s in seeds)
                print(f"| {target:.0%} | {per_epoch} | {key} | {cells} |")
    print()
    for key in KEYS:
        print(f"jitter after 0.45 epochs, {key}: " + ", ".join(f"seed {s} {jitter(by_seed[s], key):.4f}" for s in seeds))


if __name__ == "__main__":
    main()
