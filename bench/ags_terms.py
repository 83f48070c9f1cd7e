#!/usr/bin/python3
"""What drives AGS's factors over a run: reads a metrics stream (`tula train --metrics`, plain or gzipped, as
kept by bench/generalization_gap.py in bench/results/gap_metrics/) and prints, per window of epochs, the
medians over steps of each term's per-tensor median (noise gain, relative trust, trend) and of the clipped
factor, the share of tensors clipped at each bound, the training loss and the held-out accuracy.

  bench/ags_terms.py bench/results/gap_metrics/lenet5-tune-ags1-B8192-lr0.05-s0-e80-validation.jsonl.gz [--windows 8]
"""
import argparse
import gzip
import json
import statistics


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def median_of(steps, key, field="median"):
    values = [s[key][field] for s in steps if isinstance(s.get(key), dict)]
    return statistics.median(values) if values else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("metrics")
    p.add_argument("--windows", type=int, default=8)
    args = p.parse_args()
    rows = read(args.metrics)
    steps = [r for r in rows if r.get("type") == "iter" and not r.get("skipped")]
    epochs = {r["epoch"]: r for r in rows if r.get("type") == "epoch"}
    last_epoch = max(s["epoch"] for s in steps)
    size = max(1, (last_epoch + 1) // args.windows)
    print("| epochs | steps | gain | trust min-max | trend min | factor median (p10-p90) | clipped low/high "
          "| loss | accuracy at end |")
    print("|---|---|---|---|---|---|---|---|---|")
    for begin in range(0, last_epoch + 1, size):
        window = [s for s in steps if begin <= s["epoch"] < begin + size]
        if not window:
            continue
        end = min(begin + size, last_epoch + 1) - 1
        accuracy = epochs.get(end, {}).get("test_accuracy")
        print(f"| {begin}-{end} | {window[0]['step']}-{window[-1]['step']} "
              f"| {median_of(window, 'ags_noise_gain'):.2f} "
              f"| {median_of(window, 'ags_trust', 'min'):.2f}-{median_of(window, 'ags_trust', 'max'):.2f} "
              f"| {median_of(window, 'ags_trend', 'min'):.2f} "
              f"| {median_of(window, 'ags_factors'):.2f} ({median_of(window, 'ags_factors', 'p10'):.2f}-"
              f"{median_of(window, 'ags_factors', 'p90'):.2f}) "
              f"| {statistics.mean(s.get('ags_clipped_low', 0) for s in window):.2f}/"
              f"{statistics.mean(s.get('ags_clipped_high', 0) for s in window):.2f} "
              f"| {statistics.mean(s['loss'] for s in window):.3f} "
              f"| {'-' if accuracy is None else f'{100 * accuracy:.2f}%'} |")


if __name__ == "__main__":
    main()
