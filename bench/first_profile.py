#!/usr/bin/python3
"""A first job's profile: the seconds `tula tune` spends getting its quick
profile when the profile cache does not hold it, for two builds of tula run
alternately (A then B, B then A, ...), each job in a cache folder of its own,
and (since the communication trials ran as threads) what the communication
and evaluation trials fitted, from the job's profile.json.
Each job is stopped (SIGTERM) once its progress says "profile in"; the figure
is report.json's `phases.profile_s`. Rows are appended to --out and rows already
there are skipped, so an interrupted run resumes.

  bench/first_profile.py --a BEFORE/build/src/tula --a-label 65b1bb1 \\
      --b build/src/tula --b-label HEAD --pairs 5 --out bench/results/first_profile.jsonl
  bench/first_profile.py --out bench/results/first_profile.jsonl --table
"""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from bench_common import ab_main, append_row, git_state, read_rows, rows_done

def first_profile(binary, model, timeout_s=600):
    """profile_s of a tune job of `model` on Fashion-MNIST whose cache is empty, the profile log's regrids, how far
    (%) the anchor after the whole profile was from the one after the kept grid, and the tune process's resident
    memory (MiB) 3 s after the profile, and its peak by then."""
    work = tempfile.mkdtemp(prefix="tula-first-profile-")
    try:
        job = os.path.join(work, "job")
        env = dict(os.environ, TULA_CACHE_DIR=os.path.join(work, "cache"))
        with open(os.path.join(work, "log"), "w") as log:
            proc = subprocess.Popen([binary, "tune", "--model", model, "--dataset", "fashion-mnist", "--epochs", "1",
                                     "--progress", "lines", "--out", job], stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + timeout_s
        while time.time() < deadline and proc.poll() is None:
            with open(os.path.join(work, "log")) as f:
                if "profile in" in f.read():
                    break
            time.sleep(0.1)
        else:
            if proc.poll() is None:
                proc.kill()
                raise RuntimeError(f"no 'profile in' line from {binary} within {timeout_s} s")
        # The tune process's memory once the job has gone on (the pilot
        # starting): what it keeps for the rest of the job.
        time.sleep(3)
        with open(f"/proc/{proc.pid}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        memory = {k: int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        with open(os.path.join(job, "report.json")) as f:
            report = json.load(f)
        with open(os.path.join(job, "logs", "profile.log")) as f:
            log = f.read()
        with open(os.path.join(job, "profile.json")) as f:
            fitted = fitted_figures(json.load(f))
        regrids = log.count("measuring the grid again")
        # "anchor after the whole profile: 2.6 ms (1.7% from the one after the kept grid)"
        after = re.search(r"anchor after the whole profile: [^(]*\(([0-9.]+)% from", log)
        return report["phases"]["profile_s"], regrids, float(after.group(1)) if after else None, memory, fitted
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fitted_figures(profile):
    """What the communication and evaluation trials gave the plan: the fitted allreduce, overlap, contention and
    evaluation parameters, and the median DDP step at each batch of the 2-worker run."""
    fitted = profile["fitted"]
    values = {name: fitted[part]["params"]["values"] for name, part in
              (("allreduce", "allreduce"), ("evaluation", "evaluation"))}
    out = {"allreduce_alpha_s": values["allreduce"]["alpha"], "allreduce_inv_bw": values["allreduce"]["inv_bw"],
           "evaluation": values["evaluation"],
           "gamma_k2": fitted["compute"]["contention"]["values"]["gamma_k2"],
           "overlap_p": fitted["overlap"]["p"]}
    steps = {}
    for run in profile["measurement"].get("workers_raw", []):
        for row in run.get("overlap", []):
            steps[str(row["batch_per_worker"])] = statistics.median(row["step_s"])
    out["ddp_step_s"] = steps
    return out


def measure(args):
    done = rows_done(args.out, ("model", "pair", "arm"))
    arms = {"a": (args.a, args.a_label), "b": (args.b, args.b_label)}
    for model in args.models.split(","):
        for pair in range(1, args.pairs + 1):
            order = ["a", "b"] if pair % 2 else ["b", "a"]
            for arm in order:
                if (model, pair, arm) in done:
                    continue
                binary, label = arms[arm]
                profile_s, regrids, after_apart, memory, fitted = first_profile(binary, model)
                row = {"model": model, "pair": pair, "arm": arm, "build": label, "profile_s": profile_s,
                       "regrids": regrids, "after_profile_apart_pct": after_apart,
                       "tune_rss_mib": memory["VmRSS"], "tune_peak_rss_mib": memory["VmHWM"], "fitted": fitted,
                       "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state(short=True)}
                append_row(args.out, row)
                print(json.dumps(row), flush=True)


def apart(by, pairs, arm):
    values = [by[(p, arm)].get("after_profile_apart_pct") for p in pairs]
    return ", ".join("-" if v is None else f"{v:.0f}" for v in values)


def memory(by, pairs, arm):
    return ", ".join(f"{by[(p, arm)]['tune_rss_mib']:.0f} ({by[(p, arm)]['tune_peak_rss_mib']:.0f})" for p in pairs)


def table(args):
    rows = read_rows(args.out)
    # Rows from before a column was recorded print without it.
    with_apart = any(r.get("after_profile_apart_pct") is not None for r in rows)
    with_memory = any("tune_rss_mib" in r for r in rows)
    print("| model | A (s) | B (s) | B / A per pair | median of pair ratios | ratio of medians | grid measured again, A / B |"
          + (" anchor after the profile, % apart, A / B |" if with_apart else "")
          + (" tune process after it, MiB resident (peak), A / B |" if with_memory else ""))
    print("|---|---|---|---|---|---|---|" + ("---|" if with_apart else "") + ("---|" if with_memory else ""))
    for model in dict.fromkeys(r["model"] for r in rows):
        by = {(r["pair"], r["arm"]): r for r in rows if r["model"] == model}
        pairs = sorted({p for p, _ in by if (p, "a") in by and (p, "b") in by})
        a = [by[(p, "a")]["profile_s"] for p in pairs]
        b = [by[(p, "b")]["profile_s"] for p in pairs]
        ratios = [y / x for x, y in zip(a, b)]
        regrid_a = sum(by[(p, "a")]["regrids"] > 0 for p in pairs)
        regrid_b = sum(by[(p, "b")]["regrids"] > 0 for p in pairs)
        print(f"| {model} | {', '.join(f'{x:.2f}' for x in a)} | {', '.join(f'{x:.2f}' for x in b)} | "
              f"{', '.join(f'{r:.3f}' for r in ratios)} | {statistics.median(ratios):.3f} | "
              f"{statistics.median(b) / statistics.median(a):.3f} | {regrid_a} / {regrid_b} of {len(pairs)} |"
              + (f" {apart(by, pairs, 'a')} / {apart(by, pairs, 'b')} |" if with_apart else "")
              + (f" {memory(by, pairs, 'a')} / {memory(by, pairs, 'b')} |" if with_memory else ""))
    if any("fitted" in r for r in rows):
        fits_table(rows)


def fits_table(rows):
    """What the trials gave the plan, arm by arm (each pair's value, A then B): the contention gamma_k2 of two
    workers, the two workers' DDP step at the larger batch, the allreduce's alpha and the evaluation's e1."""
    print()
    print("| model | arm | gamma_k2 | DDP step, larger batch (ms) | allreduce alpha (us) | evaluation e1 (us/sample) |")
    print("|---|---|---|---|---|---|")
    for model in dict.fromkeys(r["model"] for r in rows):
        for arm in ("a", "b"):
            mine = sorted((r for r in rows if r["model"] == model and r["arm"] == arm and "fitted" in r),
                          key=lambda r: r["pair"])
            if not mine:
                continue
            f = [r["fitted"] for r in mine]
            larger = [x["ddp_step_s"][max(x["ddp_step_s"], key=int)] * 1e3 for x in f]
            cells = [
                [x["gamma_k2"] for x in f], larger, [x["allreduce_alpha_s"] * 1e6 for x in f],
                [x["evaluation"]["e1"] * 1e6 for x in f]]
            text = [", ".join(f"{v:.2f}" for v in c) + f" (median {statistics.median(c):.2f})" for c in cells]
            print(f"| {model} | {arm.upper()} ({mine[0]['build']}) | " + " | ".join(text) + " |")


if __name__ == "__main__":
    ab_main(__doc__, measure, table, pairs=5, extra=lambda p: p.add_argument("--models", default="lenet5,small_cnn"))
