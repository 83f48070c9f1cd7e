#!/usr/bin/python3
"""The BLAS library under LibTorch's CPU kernels: Debian's reference BLAS
(libblas3, arm "reference") against OpenBLAS (libopenblas0-openmp, arm
"openblas"), one tula binary, the library chosen for each run by
LD_LIBRARY_PATH (the reference arm also takes the reference LAPACK), run
alternately (A then B, B then A, ...). Each row records the library its run's
start record names, so a row the loader pointed elsewhere shows it.

Phases:
  steps  `tula train` of LeNet-5, small_cnn and ResNet-20 at batch 128 on 1
         and 2 threads: 24 steps and one evaluation of a 5,000-sample
         validation split; the row keeps the median step (iter_s) from the
         fifth step on and the evaluation's seconds.
  tune   a whole `tula tune --objective knee` job on the emulated cluster
         (scripts/emulated-cluster start first): LeNet-5 to 86% (at most 12
         epochs) and small_cnn to 83% (at most 5), a fresh quick profile each
         time, each job reading its own copy of round 39's job history; pair P
         runs seed 300 + P in both arms. The row keeps the report's phases,
         steps, epochs, the chosen configuration and the final test accuracy.
Rows are appended to --out and rows already there are skipped, so an
interrupted run resumes.

  bench/blas.py --phases steps --pairs 5 --out bench/results/blas_steps.jsonl
  bench/blas.py --phases tune --pairs 3 --out bench/results/blas_tune.jsonl
  bench/blas.py --out bench/results/blas_steps.jsonl --table
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from bench_common import ROOT, TUNE_CASES, append_row, fresh_knee_job, git_state, ratio_line, read_rows, rows_done

ARMS = ("reference", "openblas")
STEP_MODELS = ("lenet5", "small_cnn", "resnet20")
HISTORY = {"lenet5": "decision_oracle_round39_lenet86", "small_cnn": "decision_oracle_round39"}


def library_path(arm):
    """LD_LIBRARY_PATH that puts the arm's libblas.so.3 (and the reference arm's liblapack.so.3) first."""
    folders = ["blas", "lapack"] if arm == "reference" else ["openblas-openmp"]
    found = []
    for name in folders:
        hits = glob.glob(f"/usr/lib/*/{name}/lib{'lapack' if name == 'lapack' else 'blas'}.so.3")
        if not hits:
            raise SystemExit(f"no /usr/lib/*/{name}: install libblas3, liblapack3 and libopenblas0-openmp")
        found.append(os.path.dirname(hits[0]))
    return ":".join(found)


def arm_env(arm):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = library_path(arm)
    return env


def start_library(metrics_path):
    """The math_library every start record of a metrics file names (one per launch)."""
    libraries = set()
    with open(metrics_path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "start":
                libraries.add(r.get("math_library", ""))
    return sorted(libraries)


def run_steps(tula, arm, model, threads):
    work = tempfile.mkdtemp(prefix="tula-blas-")
    try:
        metrics = os.path.join(work, "m.jsonl")
        r = subprocess.run([tula, "train", "--model", model, "--dataset", "fashion-mnist", "--batch-size", "128",
                            "--max-steps", "24", "--eval-every", "24", "--validation-size", "5000", "--threads",
                            str(threads), "--progress", "none", "--tensor-stats-every", "0", "--metrics", metrics],
                           env=arm_env(arm), capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(f"train {model} ({arm}) failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
        rows = [json.loads(line) for line in open(metrics)]
        iters = [x["iter_s"] for x in rows if "iter_s" in x]
        evals = [x["eval_s"] for x in rows if x.get("type") in ("eval", "epoch") and "eval_s" in x]
        return {"iter_s": statistics.median(iters[4:]), "eval_s": evals[0] if evals else None,
                "steps": len(iters), "math_library": start_library(metrics)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_tune(tula, arm, model, seed, work):
    out = os.path.join(work, f"{model}-{arm}-s{seed}")
    command = fresh_knee_job(tula, model, out, seed, HISTORY[model])
    start = time.time()
    r = subprocess.run(command, env=arm_env(arm), capture_output=True, text=True, timeout=1800)
    wall = time.time() - start
    report_path = os.path.join(out, "report.json")
    if not os.path.exists(report_path):
        raise RuntimeError(f"tune {model} ({arm}) left no report ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
    rep = json.load(open(report_path))
    measured = rep.get("measured") or {}
    return {"exit": r.returncode, "wall_s": wall, "state": rep.get("state"), "phases": rep.get("phases"),
            "steps": measured.get("steps"), "epochs": measured.get("epochs"),
            "final_accuracy": measured.get("final_accuracy"), "cost": measured.get("cost"),
            "chosen": rep.get("chosen"), "replans": len(rep.get("replans") or []),
            "math_library": start_library(os.path.join(out, "metrics.jsonl")),
            "command": " ".join(command[1:])}


def measure(args):
    done = rows_done(args.out, ("phase", "pair", "arm", "case"))
    work = args.work or tempfile.mkdtemp(prefix="tula-blas-tune-")
    for pair in range(1, args.pairs + 1):
        order = ARMS if pair % 2 else tuple(reversed(ARMS))
        cases = []
        if "steps" in args.phases:
            cases += [("steps", f"{m}:t{t}") for m in STEP_MODELS for t in (1, 2)]
        if "tune" in args.phases:
            cases += [("tune", m) for m in TUNE_CASES]
        for phase, case in cases:
            for arm in order:
                if (phase, pair, arm, case) in done:
                    continue
                if phase == "steps":
                    model, threads = case.split(":t")
                    result = run_steps(args.tula, arm, model, int(threads))
                else:
                    result = run_tune(args.tula, arm, case, 300 + pair, work)
                row = {"phase": phase, "pair": pair, "arm": arm, "case": case, **result,
                       "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state(short=True)}
                append_row(args.out, row)
                print(json.dumps(row), flush=True)


def table(args):
    rows = read_rows(args.out)
    print(f"**{args.out}** (reference BLAS = A, OpenBLAS = B; ratios B / A)\n")
    print("| measure | pairs | reference median | OpenBLAS median | ratio of medians | median of pair ratios | "
          "pair ratios |")
    print("|---|---|---|---|---|---|---|")
    cases = sorted({(r["phase"], r["case"]) for r in rows}, key=lambda c: (c[0], c[1]))
    for phase, case in cases:
        mine = [r for r in rows if r["phase"] == phase and r["case"] == case]
        by_arm = {arm: {r["pair"]: r for r in mine if r["arm"] == arm} for arm in ARMS}
        fields = [("iter_s", "step s"), ("eval_s", "evaluation s")] if phase == "steps" else \
            [("total", "whole job s"), ("profile_s", "profile s"), ("train_s", "training s")]
        for key, name in fields:
            def value(r):
                return r["phases"][key if key != "total" else "total_s"] if phase == "tune" else r[key]
            a = {p: value(r) for p, r in by_arm["reference"].items()}
            b = {p: value(r) for p, r in by_arm["openblas"].items()}
            if set(a) & set(b):
                print(ratio_line(f"{case} {name}", a, b))
    libraries = sorted({(r["arm"], lib) for r in rows for lib in r["math_library"]})
    print("\nlibraries the runs' start records name:", "; ".join(f"{arm}: {lib}" for arm, lib in libraries))
    tunes = [r for r in rows if r["phase"] == "tune"]
    if tunes:
        print("\n| case | pair | arm | state | whole job s | profile s | epochs | steps | chosen | re-plans | "
              "final test accuracy |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(tunes, key=lambda r: (r["case"], r["pair"], r["arm"])):
            c = r["chosen"] or {}
            chosen = f"{c.get('nodes')} x {c.get('machine')}, b {c.get('batch_per_worker')}"
            print(f"| {r['case']} | {r['pair']} | {r['arm']} | {r['state']} | {r['phases']['total_s']:.1f} | "
                  f"{r['phases']['profile_s']:.1f} | {r['epochs']} | {r['steps']} | {chosen} | {r['replans']} | "
                  f"{r['final_accuracy']} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--phases", default="steps", help="steps, tune, or both (comma separated)")
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--work", help="where the tune jobs' folders go (default: a new temporary folder)")
    p.add_argument("--out", required=True)
    p.add_argument("--table", action="store_true", help="print the table of --out's rows and measure nothing")
    args = p.parse_args()
    args.phases = args.phases.split(",")
    return table(args) if args.table else measure(args)


if __name__ == "__main__":
    main()
