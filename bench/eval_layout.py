#!/usr/bin/python3
"""How an evaluation's time moves with the layout on the emulated cluster
(scripts/emulated-cluster start), and whether the tune runner's own work
beside the workers moves it.

Each case is one `tula tune --start-at 1xB --start-on emu-one:N --no-replan
--epochs E` job (no pilot; the profile measured once and cached), with the
runner's watches as tune makes them (every 50 steps or 15 s) or almost none
(--watch-every 10^6 --watch-every-seconds 10^5). The row keeps every
evaluation's seconds of the 5,000-sample validation split (the first of a
launch apart: it is the cold one) and the steps' mean and median.

Run with the build before and after evaluations were warmed at launch
(train/evaluate.hpp): bench/results/eval_layout.jsonl and
eval_layout_warmed.jsonl.

  bench/eval_layout.py [--out F] [--models lenet5,small_cnn] [--table]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

from bench_common import append_row, git_state, launches_of, rows_done

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
# Fixed before any run: two models, one and two emu-one nodes at the same global batch, both watch cadences, in
# alternation so that a slow spell of the machine does not fall on one arm.
CASES = [(model, epochs, nodes, watch) for model, epochs in (("lenet5", 1.0), ("small_cnn", 1.0))
         for nodes in (1, 2) for watch in ("tune", "rare")]
GLOBAL_BATCH = 128
REPEATS = (0, 1)


def run(args, model, epochs, nodes, watch, repeat):
    out_dir = os.path.join(args.work, f"{model}-{nodes}-{watch}-r{repeat}")
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [args.tula, "tune", "--model", model, "--dataset", "fashion-mnist", "--epochs", str(epochs),
           "--resources", os.path.join(ROOT, "catalogs", "emulated.json"), "--backend", "emulated",
           "--start-at", f"1x{GLOBAL_BATCH // nodes}", "--start-on", f"emu-one:{nodes}", "--no-replan", "--no-history",
           "--seed", str(repeat), "--progress", "none", "--out", out_dir]
    if watch == "rare":
        cmd += ["--watch-every", "1000000", "--watch-every-seconds", "100000"]
    env = dict(os.environ, TULA_CACHE_DIR=os.path.join(args.work, "cache"))
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env).returncode
    launches = launches_of(os.path.join(out_dir, "metrics.jsonl"))
    evals = [{"launch": i + 1, "step": step, "eval_s": t} for i, l in enumerate(launches) for step, t in l["evals"]]
    iters = [t for l in launches for t in l["iter_s"]]
    warm = [e["eval_s"] for i, e in enumerate(evals) if i > 0 and e["launch"] == evals[i - 1]["launch"]]
    return {"exit": rc, "evals": evals, "warm_eval_median_s": statistics.median(warm) if warm else None,
            "cold_eval_s": evals[0]["eval_s"] if evals else None, "step_mean_s": statistics.mean(iters[20:]),
            "step_median_s": statistics.median(iters[20:]), "command": " ".join(cmd)}


def table(args):
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    print("| model | nodes x batch | runner's watches | repeat | first evaluation | later evaluations: median | "
          "step: mean / median |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['nodes']} x {GLOBAL_BATCH // r['nodes']} | {r['watch']} | {r['repeat']} | "
              f"{r['cold_eval_s']:.3f} s | {r['warm_eval_median_s']:.3f} s | {1e3 * r['step_mean_s']:.1f} / "
              f"{1e3 * r['step_median_s']:.1f} ms |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--work", default="/tmp/tula-eval-layout")
    p.add_argument("--out", default=os.path.join(HERE, "results", "eval_layout.jsonl"))
    p.add_argument("--models", default="lenet5,small_cnn", help="the cases of these models only")
    p.add_argument("--table", action="store_true", help="print the rows as a table and run nothing")
    args = p.parse_args()
    if args.table:
        table(args)
        return
    state = git_state()
    os.makedirs(args.work, exist_ok=True)
    done = rows_done(args.out, ("model", "nodes", "watch", "repeat"))
    for repeat in REPEATS:
        for model, epochs, nodes, watch in CASES:
            if (model, nodes, watch, repeat) in done or model not in args.models.split(","):
                continue
            row = {"model": model, "nodes": nodes, "watch": watch, "repeat": repeat,
                   **run(args, model, epochs, nodes, watch, repeat), **state}
            append_row(args.out, row)
            print(json.dumps({k: row.get(k) for k in ("model", "nodes", "watch", "repeat", "cold_eval_s",
                                                      "warm_eval_median_s", "step_mean_s")}), flush=True)


if __name__ == "__main__":
    main()
