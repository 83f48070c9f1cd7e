#!/usr/bin/python3
"""`tula analyze` at a small and a large batch, side by side (the Tula
paper's Figure 5: gradient norm and the Hessian's largest eigenvalue along
training).

Trains small_cnn on Fashion-MNIST (2 workers, SGD with momentum, linear
scaling with warmup from the reference batch 128, the same epoch budget at
both batches) keeping 5 evenly spaced checkpoints, then runs `tula analyze`
on each run. Writes the runs' analysis JSON and SVG to --dir and prints the
table: for each fifth of training, the averaged gradient's norm and the
largest Hessian eigenvalue at both batches.

  bench/analyze_batches.py --tula build/src/tula [--batches 128,2048] [--epochs 2]
"""
import argparse
import json
import math
import os
import shutil
import subprocess

from bench_common import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_SAMPLES = 60000
CHECKPOINTS = 5


def train_and_analyze(tula, batch, epochs, directory, seed, method, extra):
    steps = epochs * math.ceil(math.ceil(TRAIN_SAMPLES / 2) / (batch // 2))
    name = f"B{batch}" + (f"-{method}" if method else "")
    run_dir = os.path.join(directory, name)
    metrics = os.path.join(directory, f"{name}-metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    rule = {"--lr": "0.05", "--lr-scaling": "linear", "--reference-batch": "128", "--warmup-epochs": "0.5",
            "--schedule": "cosine", "--momentum": "0.9", "--weight-decay": "5e-4"}
    for flag in extra:  # an option may appear once: --train-args replace the defaults
        rule.pop(flag, None)
    subprocess.run([tula, "train", "--nproc", "2", "--master-port", str(free_port()), "--model", "small_cnn",
                    "--dataset", "fashion-mnist", "--epochs", str(epochs), "--batch-size", str(batch // 2),
                    *[x for kv in rule.items() for x in kv], "--seed", str(seed),
                    "--checkpoint-dir", run_dir, "--checkpoint-every", str(max(1, steps // CHECKPOINTS)),
                    "--keep-checkpoints", "--progress", "none", "--metrics", metrics, *extra],
                   check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(directory, f"{name}-analysis.json")
    subprocess.run([tula, "analyze", run_dir, "--metrics", metrics, "--samples", "512", "--out", out,
                    "--svg", os.path.join(directory, f"{name}-analysis.svg")], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(run_dir)  # ~25 MB of checkpoints per run; the analysis keeps what they showed
    with open(metrics) as f:
        accuracy = [json.loads(l) for l in f if '"epoch"' in l]
    result = json.load(open(out))
    result["steps"] = steps
    result["test_accuracy"] = next((r["test_accuracy"] for r in reversed(accuracy) if r.get("type") == "epoch"), None)
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tula", required=True)
    p.add_argument("--batches", default="128,2048")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", default=os.path.join(HERE, "results", "analysis"))
    p.add_argument("--method", default="", help="a name for runs with --train-args (file names)")
    p.add_argument("--train-args", default="", help="more `tula train` options, e.g. \"--optimizer ags\" "
                                                    "(later options override the defaults)")
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    tula = os.path.abspath(args.tula)
    results = {int(b): train_and_analyze(tula, int(b), args.epochs, args.dir, args.seed, args.method,
                                         args.train_args.split())
               for b in args.batches.split(",")}
    batches = sorted(results)
    print("| share of training | " + " | ".join(f"B={b}: step, grad norm, top eigenvalue" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for i in range(max(len(results[b]["hessian"]) for b in batches)):
        cells = []
        for b in batches:
            h = results[b]["hessian"]
            if i < len(h):
                e = h[i]
                cells.append(f"{e['step']}, {e['gradient_norm']:.3f}, {e['eigenvalue']:.2f}"
                             + ("" if e["converged"] else " (not converged)"))
            else:
                cells.append("-")
        share = results[batches[0]]["hessian"][i]["step"] / results[batches[0]]["steps"] if i < len(
            results[batches[0]]["hessian"]) else float("nan")
        print(f"| {share:.0%} | " + " | ".join(cells) + " |")
    print("\nfinal test accuracy: " + ", ".join(
        f"B={b}: {100 * results[b]['test_accuracy']:.2f}%" for b in batches if results[b]["test_accuracy"]))


if __name__ == "__main__":
    main()
