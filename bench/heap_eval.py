#!/usr/bin/python3
"""Blocks above 32 MiB served from the heap: two builds of tula run
alternately (A then B, B then A, ...), A fixing glibc's mmap threshold at its
32 MiB ceiling (blocks above it mapped and unmapped each time), B serving no
block mapped (M_MMAP_MAX 0); both trim the heap top past 512 MiB.

Phases:
  steps  `tula train` of LeNet-5, small_cnn and ResNet-20 at batch 128 on 1
         and 2 threads: 60 steps and an evaluation of a 5,000-sample
         validation split every 12 (five); the row keeps the median step
         (iter_s) from the sixth step on, the median evaluation's seconds, the
         run's wall time, minor page faults and peak resident memory (the
         child's own rusage).
  tune   a whole `tula tune --objective knee` job on the emulated cluster
         (scripts/emulated-cluster start first): LeNet-5 to 86% (at most 12
         epochs) and small_cnn to 83% (at most 5), a fresh quick profile each
         time, each job reading its own copy of round 43's job history; pair P
         runs seed 310 + P in both arms. The row keeps the report's phases,
         steps, epochs, the evaluations' seconds, the chosen configuration
         and the final test accuracy.
Rows are appended to --out and rows already there are skipped, so an
interrupted run resumes.

  bench/heap_eval.py --a BEFORE/build/src/tula --a-label 092d983 --b build/src/tula --b-label NEW \\
      --phases steps --pairs 3 --out bench/results/heap_eval_steps.jsonl
  bench/heap_eval.py ... --phases tune --pairs 3 --out bench/results/heap_eval_tune.jsonl
  bench/heap_eval.py --out bench/results/heap_eval_steps.jsonl --table
"""
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from bench_common import TUNE_CASES, ab_main, append_row, fresh_knee_job, git_state, ratio_line, read_rows, rows_done

STEP_MODELS = ("lenet5", "small_cnn", "resnet20")
HISTORY = {"lenet5": "decision_oracle_round43_lenet86", "small_cnn": "decision_oracle_round43"}


def run_with_rusage(command, timeout):
    """Runs `command` (output kept for errors); returns (exit status, wall seconds, its rusage, output)."""
    start = time.time()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                p.kill()
                raise RuntimeError(f"{' '.join(command[:3])} ran past {timeout} s")
            time.sleep(0.05)
        wall = time.time() - start
        out.seek(0)
        return os.waitstatus_to_exitcode(status), wall, usage, out.read().decode(errors="replace")


def run_steps(tula, model, threads):
    work = tempfile.mkdtemp(prefix="tula-heap-")
    try:
        metrics = os.path.join(work, "m.jsonl")
        rc, wall, usage, output = run_with_rusage(
            [tula, "train", "--model", model, "--dataset", "fashion-mnist", "--batch-size", "128", "--max-steps", "60",
             "--eval-every", "12", "--validation-size", "5000", "--threads", str(threads), "--progress", "none",
             "--tensor-stats-every", "0", "--metrics", metrics], 900)
        if rc != 0:
            raise RuntimeError(f"train {model} failed ({rc}): {output[-3000:]}")
        rows = [json.loads(line) for line in open(metrics)]
        iters = [x["iter_s"] for x in rows if "iter_s" in x]
        evals = [x["eval_s"] for x in rows if x.get("type") in ("eval", "epoch") and "eval_s" in x]
        return {"iter_s": statistics.median(iters[5:]), "eval_s": statistics.median(evals), "evals": evals,
                "steps": len(iters), "wall_s": wall, "minor_faults": usage.ru_minflt,
                "max_rss_kib": usage.ru_maxrss}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_tune(tula, label, model, seed, work):
    out = os.path.join(work, f"{model}-{label}-s{seed}")
    command = fresh_knee_job(tula, model, out, seed, HISTORY[model])
    rc, wall, _, output = run_with_rusage(command, 1800)
    report_path = os.path.join(out, "report.json")
    if not os.path.exists(report_path):
        raise RuntimeError(f"tune {model} ({label}) left no report ({rc}): {output[-3000:]}")
    rep = json.load(open(report_path))
    measured = rep.get("measured") or {}
    records = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
    # Each evaluation once: an epoch's summary repeats its evaluation's seconds.
    evals = [r["eval_s"] for r in records if "eval_s" in r and "epoch_s" not in r]
    return {"exit": rc, "wall_s": wall, "state": rep.get("state"), "phases": rep.get("phases"),
            "steps": measured.get("steps"), "epochs": measured.get("epochs"), "evals": evals,
            "final_accuracy": measured.get("final_accuracy"), "cost": measured.get("cost"),
            "chosen": rep.get("chosen"), "replans": len(rep.get("replans") or []), "command": " ".join(command[1:])}


def measure(args):
    done = rows_done(args.out, ("phase", "pair", "arm", "case"))
    work = tempfile.mkdtemp(prefix="tula-heap-tune-")
    arms = {"a": (args.a, args.a_label), "b": (args.b, args.b_label)}
    cases = []
    if "steps" in args.phases:
        cases += [("steps", f"{m}:t{t}") for m in STEP_MODELS for t in (1, 2)]
    if "tune" in args.phases:
        cases += [("tune", m) for m in TUNE_CASES]
    for pair in range(1, args.pairs + 1):
        order = ["a", "b"] if pair % 2 else ["b", "a"]
        for phase, case in cases:
            for arm in order:
                if (phase, pair, arm, case) in done:
                    continue
                binary, label = arms[arm]
                if phase == "steps":
                    model, threads = case.split(":t")
                    result = run_steps(binary, model, int(threads))
                else:
                    result = run_tune(binary, label, case, 310 + pair, work)
                row = {"phase": phase, "pair": pair, "arm": arm, "build": label, "case": case, **result,
                       "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state(short=True)}
                append_row(args.out, row)
                print(json.dumps(row), flush=True)


def table(args):
    rows = read_rows(args.out)
    labels = {r["arm"]: r["build"] for r in rows}
    print(f"**{args.out}** (A = {labels.get('a')}, B = {labels.get('b')}; ratios B / A)\n")
    print("| measure | pairs | A median | B median | ratio of medians | median of pair ratios | pair ratios |")
    print("|---|---|---|---|---|---|---|")
    for phase, case in sorted({(r["phase"], r["case"]) for r in rows}):
        of = [r for r in rows if r["phase"] == phase and r["case"] == case]

        def by_pair(arm, value):
            return {r["pair"]: value(r) for r in of if r["arm"] == arm and value(r)}

        if phase == "steps":
            measures = (("step (s)", lambda r: r["iter_s"]), ("evaluation (s)", lambda r: r["eval_s"]),
                        ("wall (s)", lambda r: r["wall_s"]), ("minor faults", lambda r: r["minor_faults"]),
                        ("peak RSS (KiB)", lambda r: r["max_rss_kib"]))
        else:
            measures = (("whole job (s)", lambda r: r["phases"]["total_s"]),
                        ("profile (s)", lambda r: r["phases"]["profile_s"]),
                        ("evaluations (s, sum)", lambda r: sum(e for e in r["evals"] if e)))
        for name, value in measures:
            print(ratio_line(f"{case} {name}", by_pair("a", value), by_pair("b", value)))


if __name__ == "__main__":
    ab_main(__doc__, measure, table, pairs=3,
            extra=lambda p: p.add_argument("--phases", default="steps", help="steps, tune, or both (comma separated)"))
