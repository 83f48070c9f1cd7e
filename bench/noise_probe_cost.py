#!/usr/bin/python3
"""What a lone worker's noise probe costs a step (`tula train --noise-probe-every 1`, which `tula tune` passes to
every one-worker launch): the same run with and without it, one CPU core (taskset, as an emu-one node has), batch
128, Fashion-MNIST, side by side in pairs whose order alternates. A row per run: its median step time over steps
21-200 (the first 20 warm the allocator and caches) and, for a probed run, the noise scale its probes give over the
last 100 steps (the estimator tula uses, means over the steps and then the ratio).
Rows append to --out; a rerun skips the runs already there.
  /usr/bin/python3 bench/noise_probe_cost.py                  # run (nothing else on the machine)
  /usr/bin/python3 bench/noise_probe_cost.py --table          # the table from the rows"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import ROOT, append_row, git_state, noise_step_estimates, rows_done

MODELS = ("small_cnn", "lenet5")
PAIRS = 3
STEPS = 200


def run(args, model, probed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.jsonl")
        cmd = ["taskset", "-c", args.core, args.tula, "train", "--model", model, "--dataset", "fashion-mnist",
               "--batch-size", "128", "--max-steps", str(STEPS), "--no-eval", "--threads", "1", "--progress", "none",
               "--seed", "1", "--metrics", metrics] + (["--noise-probe-every", "1"] if probed else [])
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        steps = [r for r in map(json.loads, open(metrics)) if r.get("type") == "iter"]
    row = {"step_s": statistics.median(r["iter_s"] for r in steps[20:]), "command": " ".join(cmd)}
    if probed:
        estimates = [noise_step_estimates(r) for r in steps[-100:]]
        row["b_noise_last_100"] = sum(t for _, t in estimates) / sum(g for g, _ in estimates)
    return row


def table(path):
    rows = [json.loads(line) for line in open(path)]
    print("| model | pair | step without the probe | with it | ratio (with / without) |")
    print("|---|---|---|---|---|")
    for model in MODELS:
        ratios, plain, probed = [], [], []
        for pair in range(PAIRS):
            by = {r["probed"]: r for r in rows if r["model"] == model and r["pair"] == pair}
            if len(by) < 2:
                continue
            plain.append(by[False]["step_s"])
            probed.append(by[True]["step_s"])
            ratios.append(probed[-1] / plain[-1])
            print(f"| {model} | {pair} | {plain[-1] * 1000:.1f} ms | {probed[-1] * 1000:.1f} ms | {ratios[-1]:.3f} |")
        if ratios:
            print(f"| {model} | all {len(ratios)} | median {statistics.median(plain) * 1000:.1f} ms | median "
                  f"{statistics.median(probed) * 1000:.1f} ms | median of pair ratios "
                  f"{statistics.median(ratios):.3f}, ratio of medians "
                  f"{statistics.median(probed) / statistics.median(plain):.3f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--core", default="1", help="the CPU core the runs are pinned to")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "noise_probe_cost.jsonl"))
    p.add_argument("--table", action="store_true", help="print the table from --out and run nothing")
    args = p.parse_args()
    if args.table:
        table(args.out)
        return
    done = rows_done(args.out, ("model", "pair", "probed"))
    state = git_state()
    for model in MODELS:
        for pair in range(PAIRS):
            order = (False, True) if pair % 2 == 0 else (True, False)
            for probed in order:
                if (model, pair, probed) in done:
                    continue
                row = {"model": model, "pair": pair, "probed": probed, **run(args, model, probed), **state}
                append_row(args.out, row)
                print(json.dumps({k: row.get(k) for k in ("model", "pair", "probed", "step_s")}), flush=True)
    table(args.out)


if __name__ == "__main__":
    main()
