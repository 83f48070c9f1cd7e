#!/usr/bin/env python3
"""The headline of `tula tune`: wall time, cost and final accuracy to a fixed
test accuracy on Fashion-MNIST, for
  (a) a common default: one worker, batch 128, SGD;
  (b) standard large batch: 2 workers x 4096 (global 8192), SGD with linear
      scaling from 128 and a 0.5-epoch warmup (Goyal et al.);
  (c) tula tune --objective knee (profile and pilot included);
  (d) tula tune --objective fastest / cheapest;
  (c-slurm) (c) through the Slurm backend;
  (r) a re-plan that pays: tune started at 2x4 (global batch 8) with and
      without re-planning; two workers, so the job measures its own noise scale.
Every run appends one row to --out (JSON lines); rows already there (same
model, target, method) are skipped, so the script resumes. Cost is the wall
time at --price per machine-hour (this machine is billed whole)."""
import argparse
import json
import math
import os
import shutil
import subprocess
import time

from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))


def done(out, key):
    if not os.path.exists(out):
        return False
    with open(out) as f:
        return any(all(json.loads(l).get(k) == v for k, v in key.items()) for l in f if l.strip())


def train_row(args, method, extra, workers):
    run_dir = os.path.join(args.work, f"{args.model}-{method}-s{args.seed}")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    metrics = os.path.join(run_dir, "metrics.jsonl")
    cmd = [args.tula, "train", "--model", args.model, "--dataset", "fashion-mnist", "--epochs", str(args.max_epochs),
           "--target-accuracy", str(args.target), "--metrics", metrics, "--progress", "none",
           "--momentum", "0.9", "--weight-decay", "5e-4", "--schedule", "constant", "--seed", str(args.seed)] + extra
    if workers > 1:
        cmd += ["--nproc", str(workers)]
    start = time.time()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(run_dir, "log"), "w")).returncode
    wall = time.time() - start
    best, steps, epochs = 0.0, 0, 0.0
    for line in open(metrics):
        r = json.loads(line)
        if r.get("type") == "iter":
            steps = r["step"]
        if "test_accuracy" in r:
            best = max(best, r["test_accuracy"])
            epochs = r.get("epoch", epochs)
    global_batch = int(extra[extra.index("--batch-size") + 1]) * workers
    return {"wall_s": wall, "exit": rc, "best_accuracy": best, "reached": best >= args.target, "steps": steps,
            "global_batch": global_batch, "epochs": steps / math.ceil(60000 / global_batch),
            "cost": wall / 3600 * args.price, "command": " ".join(cmd)}


def tune_row(args, method, extra):
    out_dir = os.path.join(args.work, f"{args.model}-{method}-s{args.seed}")
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [args.tula, "tune", "--model", args.model, "--dataset", "fashion-mnist", "--target-accuracy",
           str(args.target), "--max-epochs", str(args.max_epochs), "--resources", "local", "--price-per-hour",
           str(args.price), "--progress", "lines", "--seed", str(args.seed), "--out", out_dir] + extra
    start = time.time()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=open(out_dir + ".log", "w")).returncode
    wall = time.time() - start
    rep = json.load(open(os.path.join(out_dir, "report.json")))
    suffix = f"-seed{args.seed}" if args.seed else ""
    kept = os.path.join(HERE, "results", "tune", f"{args.model}-{method}{suffix}.report.json")
    shutil.copyfile(os.path.join(out_dir, "report.json"), kept)
    m = rep.get("measured") or {}
    return {"wall_s": wall, "exit": rc, "best_accuracy": m.get("best_accuracy") or 0.0,
            "reached": rep.get("state") == "succeeded", "steps": m.get("steps"), "cost": m.get("cost"),
            "chosen": rep.get("chosen"), "predicted": rep.get("predicted"), "phases": rep.get("phases"),
            "remaining_error": rep.get("remaining_error"),
            "replans": [r for r in rep.get("replans", []) if r.get("applied")], "state": rep.get("state"),
            "epochs": m.get("epochs"), "reason": rep.get("reason"), "report": os.path.relpath(kept, os.path.join(HERE, "..")),
            "command": " ".join(cmd)}


def fmt_s(s):
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def config_of(row):
    if row.get("chosen"):
        c = row["chosen"]
        return f"{c['workers_per_node'] * c['nodes']} x {c['batch_per_worker']} (B = {c['global_batch']})"
    return {"a": "1 x 128 (B = 128)", "b": "2 x 4096 (B = 8192)"}.get(row["method"], "?")


def print_tables(out):
    rows = [json.loads(l) for l in open(out) if l.strip()]
    names = {"a": "(a) 1 worker, batch 128, SGD", "b": "(b) largest batch, linear + warmup",
             "c": "(c) tune --objective knee", "d-fastest": "(d) tune --objective fastest",
             "d-cheapest": "(d) tune --objective cheapest", "c-slurm": "(c) through Slurm", "r-replan": "(r) tune --start-at 2x4",
             "r-fixed": "(r) tune --start-at 2x4 --no-replan"}
    for model in sorted({r["model"] for r in rows}):
        mine = {r["method"]: r for r in rows if r["model"] == model and not r.get("seed")}
        seeded = [r for r in rows if r["model"] == model and r["method"] in ("a", "c")]
        target = next(iter(mine.values()))["target"]
        print(f"\n{model}, target {target:.0%}\n")
        print("| method | configuration (first) | wall time | cost (USD) | best accuracy | reached | steps | epochs | re-plans applied |")
        print("|---|---|---|---|---|---|---|---|---|")
        for m in names:
            if m not in mine:
                continue
            r = mine[m]
            print(f"| {names[m]} | {config_of(r)} | {fmt_s(r['wall_s'])} | {r['cost']:.4f} | {r['best_accuracy']:.2%} | "
                  f"{'yes' if r['reached'] else 'no'} | {r['steps']} | {r.get('epochs') or 0:.2f} | "
                  f"{len(r.get('replans') or []) if m not in ('a', 'b') else '-'} |")
        if "c" in mine:
            c = mine["c"]
            for ref in ("a", "b"):
                if ref in mine and c["reached"]:
                    r = mine[ref]
                    note = "" if r["reached"] else f" ({ref} did not reach the target: a lower bound)"
                    print(f"\n(c) against ({ref}): speedup {r['wall_s'] / c['wall_s']:.2f}x, "
                          f"saving {1 - c['cost'] / r['cost']:.0%}{note}")
        if any(r.get("seed") for r in seeded):
            print("\n| method | configuration per seed (0, 1, 2) | wall time per seed | median | epochs per seed | "
                  "best accuracy per seed |")
            print("|---|---|---|---|---|---|")
            medians = {}
            for m in ("a", "c"):
                runs = sorted((r for r in seeded if r["method"] == m), key=lambda r: r.get("seed") or 0)
                times = sorted(r["wall_s"] for r in runs)
                medians[m] = times[len(times) // 2] if len(times) % 2 else sum(times[len(times) // 2 - 1:][:2]) / 2
                walls = ", ".join(fmt_s(r["wall_s"]) for r in runs)
                steps = ", ".join(format(r.get("epochs") or 0, ".2f") for r in runs)
                accs = ", ".join(format(r["best_accuracy"], ".2%") for r in runs)
                configs = ", ".join(config_of(r) for r in runs)
                print(f"| {names[m]} | {configs} | {walls} | {fmt_s(medians[m])} | {steps} | {accs} |")
            print(f"\n(c) against (a), ratio of the medians over seeds: speedup {medians['a'] / medians['c']:.2f}x")
        print("\n| run | predicted at the plan | measured | error | cost predicted | cost measured | "
              "remaining-time error at 25 / 50 / 75% |")
        print("|---|---|---|---|---|---|---|")
        predicted_runs = [(names[m], mine.get(m)) for m in ("c", "d-fastest", "d-cheapest", "c-slurm", "r-replan")]
        predicted_runs += [(f"{names['c']}, seed {r['seed']}", r) for r in seeded if r["method"] == "c" and r.get("seed")]
        for name, r in predicted_runs:
            if not r or not r.get("predicted"):
                continue
            p = r["predicted"]
            errs = " / ".join(f"{e['error']:+.0%}" for e in (r.get("remaining_error") or [])) or "-"
            print(f"| {name} | {fmt_s(p['time_s'])} | {fmt_s(r['wall_s'])} | {p['time_s'] / r['wall_s'] - 1:+.1%} | "
                  f"{p['cost']:.4f} | {r['cost']:.4f} | {errs} |")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    p.add_argument("--model", default="small_cnn")
    p.add_argument("--target", type=float, default=0.85)
    p.add_argument("--max-epochs", type=int, default=10)
    p.add_argument("--price", type=float, default=0.10)
    p.add_argument("--methods", default="a,b,c,d-fastest,d-cheapest,r-replan,r-fixed")
    p.add_argument("--work", default="/tmp/tula-headline")
    p.add_argument("--out", default=os.path.join(HERE, "results", "tune_headline.jsonl"))
    p.add_argument("--seed", type=int, default=0, help="seed of weights and sample order (rows keyed by it)")
    p.add_argument("--table", action="store_true", help="print the tables from --out and run nothing")
    args = p.parse_args()
    if args.table:
        print_tables(args.out)
        return
    git_state(short=True)  # the commit the runs start at, recorded in each row (short form, as in the first rows)
    os.makedirs(args.work, exist_ok=True)
    half_epoch = lambda b: str(max(1, math.ceil(60000 / b / 2)))
    runs = {
        "a": lambda: train_row(args, "a", ["--batch-size", "128", "--optimizer", "sgd", "--lr", "0.05",
                                           "--eval-every", half_epoch(128)], 1),
        "b": lambda: train_row(args, "b", ["--batch-size", "4096", "--optimizer", "sgd", "--lr", "0.05",
                                           "--lr-scaling", "linear", "--reference-batch", "128",
                                           "--warmup-epochs", "0.5", "--eval-every", half_epoch(8192)], 2),
        "c": lambda: tune_row(args, "c", ["--objective", "knee"]),
        "d-fastest": lambda: tune_row(args, "d-fastest", ["--objective", "fastest"]),
        "d-cheapest": lambda: tune_row(args, "d-cheapest", ["--objective", "cheapest"]),
        # Needs a running cluster: scripts/slurm-cluster start, then SLURM_CONF from /tmp/tula-slurm/env.
        "c-slurm": lambda: tune_row(args, "c-slurm", ["--objective", "knee", "--backend", "slurm"]),
        "r-replan": lambda: tune_row(args, "r-replan", ["--start-at", "2x4"]),
        "r-fixed": lambda: tune_row(args, "r-fixed", ["--start-at", "2x4", "--no-replan"]),
    }
    for method in args.methods.split(","):
        key = {"model": args.model, "target": args.target, "method": method}
        if args.seed:
            key["seed"] = args.seed  # rows without a seed are seed 0
        if done(args.out, key):
            print(f"skip {method}: already in {args.out}")
            continue
        print(f"run {method} ...", flush=True)
        row = dict(key, **runs[method]())
        row["price_per_hour"] = args.price
        row.update(git_state(short=True))
        append_row(args.out, row)
        print(json.dumps({k: row[k] for k in ("method", "wall_s", "best_accuracy", "reached", "cost")}), flush=True)


if __name__ == "__main__":
    main()
