#!/usr/bin/python3
"""A job history as `tula tune` writes it since jobs leave where they crossed their target (tune/refit.hpp,
reference_epochs_reached), made from a history written before: each line's job is read back from its metrics, and
its reference epochs become the crossing interpolated between the last evaluation below the target and the first at
or above it, instead of that evaluation's epochs (docs/notebook/round-13.md, "The oracle, round 13").

Only jobs that never ran above the reference batch are converted: there (the epochs floor) progress is counted in
samples, so the crossing's samples give its epochs without the noise read. A line whose job's metrics are gone, or
whose job ran above that batch, is left out (counted on stderr).

  bench/history_crossings.py --history IN.jsonl --target 0.83 --out OUT.jsonl
"""
import argparse
import json
import os
import sys


def crossing_epochs(metrics_path, target, reference_batch):
    """The epochs at the reference batch where the job crossed `target`, or None (a batch above the reference, or
    never reached). At or below the reference batch (the epochs floor) a minimum step is the same number of samples
    at any batch, so the crossing is interpolated in samples (an epoch's last, partial step included)."""
    samples, at_step, evaluations, train_samples = 0, {}, [], None
    for line in open(metrics_path):
        r = json.loads(line)
        kind = r.get("type")
        if kind == "start":
            train_samples = train_samples or r["train_samples"]
        elif kind == "iter":
            if r["global_batch"] > reference_batch:
                return None
            samples += r["global_batch"]
            at_step[r["step"]] = samples
        elif kind in ("eval", "epoch") and "test_accuracy" in r:
            evaluations.append((at_step[r["step"]], r["test_accuracy"]))
    crossed = crossing_between(evaluations, target)
    return None if crossed is None else crossed / train_samples


def crossing_between(evaluations, target):
    """Where a curve of (progress, accuracy) evaluations crossed `target`: interpolated in accuracy between the last
    evaluation below it and the first at or above it (that one's progress if it is the first evaluation); None where
    no evaluation reached it."""
    for i, (at, accuracy) in enumerate(evaluations):
        if accuracy < target:
            continue
        if i == 0:
            return at
        below_at, below = evaluations[i - 1]
        return below_at + (target - below) / (accuracy - below) * (at - below_at)
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--history", required=True)
    p.add_argument("--target", type=float, required=True)
    p.add_argument("--reference-batch", type=int, default=128)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    kept, gone, other = [], 0, 0
    for line in open(a.history):
        entry = json.loads(line)
        metrics = os.path.join(entry["job"], "metrics.jsonl")
        if not os.path.exists(metrics):
            gone += 1
            continue
        epochs = crossing_epochs(metrics, a.target, a.reference_batch)
        if epochs is None:
            other += 1
            continue
        kept.append(dict(entry, reference_epochs=epochs, evaluated_epochs=entry["reference_epochs"]))
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        for entry in kept:
            f.write(json.dumps(entry) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, a.out)
    print(f"{len(kept)} lines converted, {gone} left out (metrics gone), {other} left out (above the reference batch or not "
          f"reached)", file=sys.stderr)


if __name__ == "__main__":
    main()
