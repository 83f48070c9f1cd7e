#!/usr/bin/python3
"""The generalization grid: final test accuracy on Fashion-MNIST (full test
set) at a fixed epoch budget, for the reference batch and large global
batches, under each large-batch method, over seeds. Every finished run
appends one JSON line to --out; runs already there are skipped, so the grid
can be stopped and continued (e.g. in the background across days).

  bench/generalization.py --tula build/src/tula                      # the main grid
  bench/generalization.py --tula build/src/tula --grid ablation      # AGS ablations at the largest batch
  bench/generalization.py --table                                    # print the tables from --out
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import free_port, git_state
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE_BATCH = 128
BASE_LR = 0.05     # tuned for small_cnn at the reference batch (docs/benchmarks/engine.md, accuracy)
WARMUP = 0.5       # epochs
# Per-worker batches above this run as accumulated micro-batches: the same
# gradient (small_cnn has no batch norm; dropout masks are drawn per
# micro-batch either way), at a fraction of the time a 4096-sample step
# spends streaming activations far larger than the caches.
MICRO_BATCH = 512

# name -> tula train options; lr given at the reference batch.
METHODS = {
    "sgd-linear": ["--optimizer", "sgd", "--lr-scaling", "linear", "--warmup-epochs", str(WARMUP)],
    "sgd-sqrt-legw": ["--optimizer", "sgd", "--lr-scaling", "sqrt", "--legw", "--warmup-epochs", "0.03"],
    "lars": ["--optimizer", "lars", "--lr-scaling", "linear", "--lars-trust", "0.001",
             "--warmup-epochs", str(WARMUP)],
    "lamb": ["--optimizer", "lamb", "--lr-scaling", "sqrt", "--warmup-epochs", str(WARMUP),
             "--weight-decay", "0.01", "--lr-override", "0.005"],
    "ags": ["--optimizer", "ags", "--warmup-epochs", str(WARMUP)],
}
ABLATIONS = {
    "ags-unbounded": ["--optimizer", "ags", "--warmup-epochs", str(WARMUP), "--ags-unbounded"],
    "ags-bounds-0.5-8": ["--optimizer", "ags", "--warmup-epochs", str(WARMUP), "--ags-min", "0.5", "--ags-max", "8"],
    "ags-no-noise": ["--optimizer", "ags", "--warmup-epochs", str(WARMUP), "--ags-ablate", "noise"],
    "ags-no-trust": ["--optimizer", "ags", "--warmup-epochs", str(WARMUP), "--ags-ablate", "trust"],
    "ags-no-trend": ["--optimizer", "ags", "--warmup-epochs", str(WARMUP), "--ags-ablate", "trend"],
}



def run(tula, model, method, options, batch, seed, epochs, workers):
    lr = BASE_LR
    options = list(options)
    if "--lr-override" in options:  # LAMB's own scale of rate
        i = options.index("--lr-override")
        lr = float(options[i + 1])
        del options[i:i + 2]
    if batch == REFERENCE_BATCH:  # at the reference every rule is plain SGD with its warmup
        options = ["--optimizer", "sgd", "--warmup-epochs", str(WARMUP)] if method.startswith("sgd") else options
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        per_worker, accumulation = batch // workers, 1
        while per_worker // accumulation > MICRO_BATCH and per_worker % (2 * accumulation) == 0:
            accumulation *= 2
        cmd = [tula, "train", "--nproc", str(workers), "--master-port", str(free_port()), "--model", model,
               "--dataset", "fashion-mnist", "--epochs", str(epochs), "--batch-size", str(per_worker // accumulation),
               "--accumulation-steps", str(accumulation),
               "--lr", str(lr), "--momentum", "0.9", "--schedule", "cosine",
               # a method may set its own decay (LAMB's decoupled 0.01); the option may appear once
               *([] if "--weight-decay" in options else ["--weight-decay", "5e-4"]),
               "--reference-batch", str(REFERENCE_BATCH), "--seed", str(seed), "--progress", "none",
               "--tensor-stats-every", "0", "--metrics", metrics] + options
        start = time.time()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rows = [json.loads(line) for line in open(metrics)] if os.path.exists(metrics) else []
    epochs_done = [r for r in rows if r.get("type") == "epoch"]
    factors = [r["ags_factors"]["median"] for r in rows if r.get("type") == "iter" and r.get("ags_factors")]
    return {"model": model, "method": method, "global_batch": batch, "seed": seed, "epochs": epochs,
            "workers": workers, "accumulation_steps": accumulation, "exit_code": proc.returncode,
            # The worker's own reason (e.g. repeated non-finite gradients) comes
            # before the launcher's closing line: keep the lines that say why.
            "error": " | ".join([l for l in proc.stderr.strip().splitlines()
                                 if "error" in l.lower() or "non-finite" in l.lower() or "failed" in l][-3:])
            if proc.returncode and proc.stderr.strip() else None,
            "test_accuracy": epochs_done[-1]["test_accuracy"] if epochs_done else None,
            "accuracy_by_epoch": [r.get("test_accuracy") for r in epochs_done],
            "final_train_loss": epochs_done[-1]["train_loss"] if epochs_done else None,
            "ags_median_factor_last": factors[-1] if factors else None,
            "wall_s": time.time() - start}


def load(path):
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def finished(r):
    """The run completed its epochs (exit status 0) and recorded a test accuracy."""
    return r.get("exit_code", 0) == 0 and r["test_accuracy"] is not None


def table(rows, model, epochs):
    rows = [r for r in rows if r["model"] == model and r["epochs"] == epochs]
    batches = sorted({r["global_batch"] for r in rows})
    methods = [m for m in list(METHODS) + list(ABLATIONS) if any(r["method"] == m for r in rows)]
    print(f"\n{model}, {epochs} epochs, Fashion-MNIST test accuracy (%), mean +- std over seeds (runs)\n")
    print("| method | " + " | ".join(f"B={b}" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for m in methods:
        cells = []
        for b in batches:
            cell = [r for r in rows if r["method"] == m and r["global_batch"] == b]
            # A run that exited non-zero stopped before its last epoch (the
            # non-finite gradient guard, or a failed worker): the accuracy it
            # recorded is not the result of the epoch budget.
            acc = [100 * r["test_accuracy"] for r in cell if finished(r)]
            failed = sum(1 for r in cell if not finished(r))
            stopped = f" + {failed} stopped" if failed else ""
            if not acc and failed:
                cells.append(f"diverged ({failed})")
            elif not acc:
                cells.append("-")
            elif len(acc) == 1:
                cells.append(f"{acc[0]:.2f} (1){stopped}")
            else:
                cells.append(f"{statistics.mean(acc):.2f} +- {statistics.stdev(acc):.2f} ({len(acc)}){stopped}")
        print(f"| {m} | " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tula", default=None)
    p.add_argument("--model", default="small_cnn")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batches", default="8192,2048,128")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--grid", choices=["main", "ablation"], default="main")
    p.add_argument("--methods", default=None, help="comma list (default: all of the grid)")
    p.add_argument("--out", default=os.path.join(HERE, "results", "generalization.jsonl"))
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    if args.table:
        rows = load(args.out)
        for model in sorted({r["model"] for r in rows}):
            for epochs in sorted({r["epochs"] for r in rows if r["model"] == model}):
                table(rows, model, epochs)
        return
    git_state()  # the commit the runs start at, recorded in each row
    grid = METHODS if args.grid == "main" else ABLATIONS
    methods = args.methods.split(",") if args.methods else list(grid)
    batches = [int(b) for b in args.batches.split(",")]
    if args.grid == "ablation":
        batches = [max(batches)]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    for seed in (int(s) for s in args.seeds.split(",")):  # seeds outermost: a first full pass comes early
        for batch in batches:
            for method in methods:
                if batch == REFERENCE_BATCH and method != methods[0]:
                    continue  # one reference run per seed: every method is plain SGD there
                done = load(args.out)
                if any(r["model"] == args.model and r["method"] == method and r["global_batch"] == batch
                       and r["seed"] == seed and r["epochs"] == args.epochs for r in done):
                    continue
                row = run(args.tula, args.model, method, {**METHODS, **ABLATIONS}[method], batch, seed,
                          args.epochs, args.workers)
                row.update(git_state())
                with open(args.out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
