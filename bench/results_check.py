#!/usr/bin/python3
"""Recomputes every figure of docs/results.md from its rows in bench/results/ and prints it beside the value the
page states, and the README's headline figures likewise (and that its layout names every src/ folder); exits 1
when any differs, when a rows file is missing, or when the page no longer states a figure.

  /usr/bin/python3 bench/results_check.py            # the table of figures, docs value beside the recomputed one
  /usr/bin/python3 bench/results_check.py --quiet    # only the mismatches (what CTest's results_check runs)
  /usr/bin/python3 bench/results_check.py --doc FILE # check another copy of the page

Each figure names its rows file, how it is computed (the same arithmetic as the script that first printed it:
bench/decision_oracle.py's headline ratios, bench/targets_standing.py's pooled errors, bench/loader_speed.py's
pair ratios, bench/generalization_gap.py's means) and a pattern that finds the page's value; the page's value and
the recomputed one are compared as the page rounds them. Python 3 standard library only; rows files may be gzipped
(bench_common.read_rows reads FILE or FILE.gz).
"""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import prediction_floor  # noqa: E402
import targets_standing  # noqa: E402
from bench_common import read_rows, rows_path  # noqa: E402

RESULTS = os.path.join(HERE, "results")
DOC = os.path.join(HERE, "..", "docs", "results.md")
README = os.path.join(HERE, "..", "README.md")
median = statistics.median


def rows(name):
    path = os.path.join(RESULTS, name)
    if not os.path.exists(rows_path(path)):
        raise FileNotFoundError(f"rows file bench/results/{name} (or {name}.gz) is missing")
    return read_rows(path)


# --- the oracle's headline: (c) the knee job against (a) the default and (b) standard large batch ---------------

def headline(name, other, how):
    """(other) / (c) time at the seeds both ran, as bench/decision_oracle.py prints it: (c)'s `total_s` (profile
    and pilot included) against the other method's `time_s`; `how` 'pairs' (median of pair ratios) or 'medians'
    (ratio of medians)."""
    rs = rows(name)
    c = {r["seed"]: r for r in rs if r["phase"] == "tune"}
    o = {r["seed"]: r for r in rs if r["phase"] == other}
    seeds = sorted(set(c) & set(o))
    if how == "pairs":
        return median([o[s]["time_s"] / c[s]["total_s"] for s in seeds])
    return median([o[s]["time_s"] for s in seeds]) / median([c[s]["total_s"] for s in seeds])


# --- the held-out rounds 58-61 pooled (bench/targets_standing.py) -------------------------------------------------

HELD_OUT = ["decision_oracle_round58_first_lenet5.jsonl", "decision_oracle_round58_first_small_cnn.jsonl",
            "decision_oracle_round58_lenet5.jsonl", "decision_oracle_round58_lenet5_two_nodes.jsonl",
            "decision_oracle_round58_small_cnn.jsonl",
            "decision_oracle_round59_cheapest_lenet5.jsonl", "decision_oracle_round59_cheapest_lenet5_repeat.jsonl",
            "decision_oracle_round59_cheapest_small_cnn.jsonl",
            "decision_oracle_round59_cheapest_small_cnn_repeat.jsonl",
            "decision_oracle_round59_fastest_lenet5.jsonl", "decision_oracle_round59_fastest_lenet5_repeat.jsonl",
            "decision_oracle_round59_fastest_small_cnn.jsonl",
            "decision_oracle_round59_fastest_small_cnn_repeat.jsonl",
            "decision_oracle_round60_first_small_cnn_86.jsonl", "decision_oracle_round61_first_lenet5_88.jsonl"]


def held_out_measures():
    for name in HELD_OUT:
        rows(name)  # a missing file is an error, not a smaller pool
    return [targets_standing.measures(j) for j in targets_standing.jobs([os.path.join(RESULTS, n) for n in HELD_OUT])]


def held_out(field, what):
    values = sorted(abs(m[field]) for m in held_out_measures() if m[field] is not None)
    return {"median": median(values), "largest": values[-1], "beyond25": sum(v > 0.25 for v in values),
            "count": len(values)}[what]


def floor_median():
    whole, _ = targets_standing.floor_rows([os.path.join(RESULTS, n) for n in HELD_OUT])
    return median(sorted(abs(v) for v in whole))


def reached():
    ms = held_out_measures()
    return sum(m["reached"] for m in ms), sum(m["gave_up"] for m in ms)


# --- throughput against PyTorch DDP -------------------------------------------------------------------------------

def throughput(name, label, which, **match):
    rs = [r for r in rows(name) if r.get("label") == label and all(r.get(k) == v for k, v in match.items())]
    ratios = [r["ratio"] for r in rs]
    return {"min": min(ratios), "max": max(ratios), "one": ratios[0] if len(ratios) == 1 else None,
            "above1": sum(x > 1 for x in ratios), "count": len(ratios)}[which]


# --- the loader against torchvision (bench/loader_speed.py's median of pair ratios) -------------------------------

def loader(name, threads):
    rs = [r for r in rows(name) if r["threads"] == threads]
    tula = {r["pair"]: r["images_per_s"] for r in rs if r["loader"] == "tula"}
    peer = {r["pair"]: r["images_per_s"] for r in rs if r["loader"] == "torchvision"}
    return median([tula[p] / peer[p] for p in sorted(set(tula) & set(peer))])


# --- generalization: LeNet-5, 80 epochs, test-set means over the finals' seeds ------------------------------------

def gap_mean(method, batch):
    rs = [r for r in rows("generalization_gap.jsonl") if r.get("phase") == "final" and r.get("epochs") == 80
          and r["method"] == method and r["global_batch"] == batch]
    return 100 * statistics.mean(0.0 if r.get("collapsed") else r["accuracy"] for r in rs)


# --- the service under faults and attacks -------------------------------------------------------------------------

def kills(field):
    rs = [r for r in rows("service_faults.jsonl") if r.get("kind") == "kill-summary"
          and str(r.get("run", "")).startswith("kills60-seed") and r.get("git_head") == "9aa3e72"]
    if field == "runs":
        return len(rs)
    return sum(r[field] for r in rs)


def server_ab(name, commit, route, field, run):
    """Median over one run's pairs of B/A `field` (requests_per_s, p50_ms, server_cpu_us_per_request): the run-th
    run (from 0) of bench/service_latency_ab.py at `commit` in rows `name`, a run being 5 alternated pairs of both
    routes (20 rows)."""
    rs = [r for r in rows(name) if r["commit"].startswith(commit)]
    run_rows = rs[20 * run:20 * run + 20]
    a = [r for r in run_rows if r["route"] == route and r["build"] == "A"]
    b = [r for r in run_rows if r["route"] == route and r["build"] == "B"]
    if len(a) != 5 or len(b) != 5:
        raise ValueError(f"run {run} at {commit} has {len(a)} A and {len(b)} B windows of {route}")
    return median(y[field] / x[field] for x, y in zip(a, b))


def v1_jobs_before_kept_statements():
    """`/v1/jobs` requests/s against f41bc2c in the three runs at 8f37cf4's server (the third's rows at ab3fa6f)."""
    runs = [("8f37cf4", 0), ("8f37cf4", 1), ("ab3fa6f", 0)]
    return [server_ab("service_net/throughput_ab.jsonl", c, "GET /v1/jobs", "requests_per_s", r) for c, r in runs]


def hostile(label, what):
    """Over one run of bench/service_hostile.py (rows labelled `label`): the largest /healthz p99 or max, the largest
    peak memory, or the largest share by which memory 10 s after an attack is above its start (in %)."""
    rs = [r for r in rows("service_net/hostile.jsonl") if r.get("label") == label]
    if what == "after_pct":
        return max(100 * (r["rss_after_10s_mb"] / r["rss_before_mb"] - 1) for r in rs)
    return max(r[what] for r in rs)


def cpu_pair(label, model):
    """The median of pair ratios (after over before) of bench/throughput_vs_peer.py --peer-tula's row."""
    return next(r["ratio"] for r in rows("gpu_step/cpu_pairs.jsonl") if r.get("label") == label and r["model"] == model)


def attacks(label, field):
    r = next(r for r in rows("service_attacks.jsonl") if r["label"] == label)
    return {"passed": r["passed"], "probes": len(r["results"])}[field]


# --- the figures: (name, rows file, pattern finding the page's value, recompute, format) --------------------------

def pct1(x):
    return f"{100 * x:.1f}"


def x2(x):
    return f"{x:.2f}"


def d2(x):
    return f"{x:.2f}"


def whole(x):
    return f"{x}"


def d1(x):
    return f"{x:.1f}"


def two_jobs(field, which):
    """Over bench/slurm_cluster.py twojobs' runs: the second job's queue wait (the longer of each run's two), or
    the gap between the first job's last record and the second's first."""
    rs = rows("slurm/twojobs.jsonl")
    if field == "gap":
        values = [r["gap_s"] for r in rs if r["kind"] == "twojobs-overlap"]
    else:
        by_run = {}
        for r in rs:
            if r["kind"] == "twojobs":
                by_run.setdefault(r["run"], []).append(r["queued_s"])
        values = [max(v) if field == "second" else min(v) for v in by_run.values()]
    return {"min": min, "max": max}[which](values)


S53 = "decision_oracle_round53_headline_small_cnn.jsonl"
S55 = "decision_oracle_round55_one_node.jsonl"
S56 = "decision_oracle_round56_headline_lenet5.jsonl"
S58 = "decision_oracle_round58_small_cnn.jsonl"
S62 = "decision_oracle_round62_slurm_small_cnn.jsonl"
L58 = "decision_oracle_round58_lenet5.jsonl"
HELD = "decision_oracle_round5[89]_*, round6[01]_*"
TP = "throughput.jsonl"

FIGURES = [
    ("held out: whole job at the plan, median |error|", HELD, r"[Ww]hole job at the plan: median error ([0-9.]+)%",
     lambda: held_out("plan", "median"), pct1),
    ("held out: whole job at the plan, largest", HELD,
     r"[Ww]hole job at the plan: median error [0-9.]+%, largest ([0-9.]+)%",
     lambda: held_out("plan", "largest"), pct1),
    ("held out: whole job beyond 25%", HELD, r"largest [0-9.]+%, (\d+) of \d+ beyond 25%",
     lambda: held_out("plan", "beyond25"), whole),
    ("held out: tune jobs pooled", HELD, r"largest [0-9.]+%, \d+ of (\d+) beyond 25%",
     lambda: held_out("plan", "count"), whole),
    ("held out: time left at half, median |error|", HELD, r"[Tt]ime left at half the run: median error ([0-9.]+)%",
     lambda: held_out("half", "median"), pct1),
    ("held out: the seed floor's median", HELD, r"the seed floor's median ([0-9.]+)%", floor_median, pct1),
    ("held out: reached their target", HELD, r"(\d+) of \d+ reached their targets", lambda: reached()[0], whole),
    ("held out: judged out of reach", HELD, r"reached their targets, (\d+) judged out of reach",
     lambda: reached()[1], whole),
    ("knee vs default, small_cnn round 53, median of pairs", S53, r"knee, small_cnn \(round 53\): ([0-9.]+)x",
     lambda: headline(S53, "a", "pairs"), x2),
    ("knee vs default, small_cnn round 53, ratio of medians", S53,
     r"knee, small_cnn \(round 53\): [0-9.]+x median of pair ratios, ([0-9.]+)x",
     lambda: headline(S53, "a", "medians"), x2),
    ("knee vs tuned large batch, small_cnn round 53, ratio of medians", S53,
     r"standard large batch, small_cnn \(round 53\): ([0-9.]+)x ratio of medians",
     lambda: headline(S53, "b", "medians"), x2),
    ("knee vs tuned large batch, small_cnn round 53, median of pairs", S53,
     r"standard large batch, small_cnn \(round 53\): [0-9.]+x ratio of medians, ([0-9.]+)x",
     lambda: headline(S53, "b", "pairs"), x2),
    ("knee vs default, small_cnn round 58, median of pairs", S58, r"later small_cnn jobs \(round 58\): ([0-9.]+)x",
     lambda: headline(S58, "a", "pairs"), x2),
    ("knee vs default, small_cnn round 58, ratio of medians", S58,
     r"later small_cnn jobs \(round 58\): [0-9.]+x median of pair ratios, ([0-9.]+)x",
     lambda: headline(S58, "a", "medians"), x2),
    ("knee vs default, LeNet-5 round 58, median of pairs", L58, r"LeNet-5 \(round 58\): ([0-9.]+)x",
     lambda: headline(L58, "a", "pairs"), x2),
    ("knee vs default, LeNet-5 round 58, ratio of medians", L58,
     r"LeNet-5 \(round 58\): [0-9.]+x median of pair ratios, ([0-9.]+)x",
     lambda: headline(L58, "a", "medians"), x2),
    ("knee vs tuned large batch, LeNet-5 round 56, ratio of medians", S56,
     r"standard large batch, LeNet-5 \(round 56\): ([0-9.]+)x", lambda: headline(S56, "b", "medians"), x2),
    ("knee vs default, Slurm round 62, median of pairs", S62, r"knee on Slurm \(round 62\): ([0-9.]+)x",
     lambda: headline(S62, "a", "pairs"), x2),
    ("knee vs default, Slurm round 62, ratio of medians", S62,
     r"knee on Slurm \(round 62\): [0-9.]+x median of pair ratios, ([0-9.]+)x",
     lambda: headline(S62, "a", "medians"), x2),
    ("knee vs tuned large batch, Slurm round 62, ratio of medians", S62,
     r"standard large batch on Slurm \(round 62\): ([0-9.]+)x ratio of medians",
     lambda: headline(S62, "b", "medians"), x2),
    ("knee vs tuned large batch, Slurm round 62, median of pairs", S62,
     r"standard large batch on Slurm \(round 62\): [0-9.]+x ratio of medians, ([0-9.]+)x",
     lambda: headline(S62, "b", "pairs"), x2),
    ("knee vs default, one node round 55, ratio of medians", S55, r"one node \(round 55\): ([0-9.]+)x against",
     lambda: headline(S55, "a", "medians"), x2),
    ("knee vs tuned large batch, one node round 55, ratio of medians", S55,
     r"one node \(round 55\): [0-9.]+x against the default \(ratio of medians\) \| ([0-9.]+)x",
     lambda: headline(S55, "b", "medians"), x2),
    ("CPU throughput, lowest median of pair ratios", TP, r"six configurations: ([0-9.]+)x",
     lambda: throughput(TP, "after-records", "min"), x2),
    ("CPU throughput, highest median of pair ratios", TP, r"six configurations: [0-9.]+x to ([0-9.]+)x",
     lambda: throughput(TP, "after-records", "max"), x2),
    ("CPU throughput, configurations above 1.0", TP, r"(\d+) of \d+ above 1\.0",
     lambda: throughput(TP, "after-records", "above1"), whole),
    ("GPU resnet18 (first machine)", "gpu/throughput_first.jsonl", r"resnet18 at 256: ([0-9.]+)x",
     lambda: throughput("gpu/throughput_first.jsonl", "gpu-checks", "one", model="resnet18"), x2),
    ("GPU resnet18 (second machine)", "gpu/throughput_second.jsonl",
     r"resnet18 at 256: [0-9.]+x on one machine, ([0-9.]+)x",
     lambda: min(r["ratio"] for r in rows("gpu/throughput_second.jsonl")), x2),
    ("GPU resnet50", "gpu/throughput_first.jsonl", r"resnet50 at 224 px: ([0-9.]+)x",
     lambda: throughput("gpu/throughput_first.jsonl", "gpu-checks", "one", model="resnet50"), x2),
    ("loader, 1 core", "loader_speed.jsonl", r"against torchvision: ([0-9.]+)x at 1 core",
     lambda: loader("loader_speed.jsonl", 1), d2),
    ("loader, 2 cores", "loader_speed.jsonl", r"x at 1 core, ([0-9.]+)x at 2",
     lambda: loader("loader_speed.jsonl", 2), d2),
    ("loader held out, 1 core", "loader_speed_heldout.jsonl", r"held-out folder: ([0-9.]+)x and",
     lambda: loader("loader_speed_heldout.jsonl", 1), d2),
    ("loader held out, 2 cores", "loader_speed_heldout.jsonl", r"held-out folder: [0-9.]+x and ([0-9.]+)x",
     lambda: loader("loader_speed_heldout.jsonl", 2), d2),
    ("generalization: reference at 128", "generalization_gap.jsonl", r"the reference \(SGD, 128\) ([0-9.]+)%",
     lambda: gap_mean("reference", 128), d2),
    ("generalization: AGS at 8192", "generalization_gap.jsonl", r"AGS at 8192 ([0-9.]+)%",
     lambda: gap_mean("ags-adam", 8192), d2),
    ("generalization: LAMB at 8192", "generalization_gap.jsonl", r"LAMB at 8192 ([0-9.]+)%",
     lambda: gap_mean("lamb", 8192), d2),
    ("generalization: standard large batch at 8192", "generalization_gap.jsonl",
     r"standard large batch at 8192 ([0-9.]+)%", lambda: gap_mean("sgd-linear", 8192), d2),
    ("generalization: AGS at 4096", "generalization_gap.jsonl", r"AGS at 4096 ([0-9.]+)%",
     lambda: gap_mean("ags-adam", 4096), d2),
    ("generalization: LAMB at 4096", "generalization_gap.jsonl", r"LAMB at 4096 ([0-9.]+)%",
     lambda: gap_mean("lamb", 4096), d2),
    ("Slurm two jobs: second's queue wait, shortest", "slurm/twojobs.jsonl", r"the second queued (\d+)-\d+ s",
     lambda: int(two_jobs("second", "min")), whole),
    ("Slurm two jobs: second's queue wait, longest", "slurm/twojobs.jsonl", r"the second queued \d+-(\d+) s",
     lambda: int(two_jobs("second", "max")), whole),
    ("Slurm two jobs: first's queue wait, longest", "slurm/twojobs.jsonl", r"the first 0-(\d+) s",
     lambda: int(two_jobs("first", "max")), whole),
    ("Slurm two jobs: gap, shortest", "slurm/twojobs.jsonl", r"workers started ([0-9.]+)-[0-9.]+ s after",
     lambda: two_jobs("gap", "min"), d1),
    ("Slurm two jobs: gap, longest", "slurm/twojobs.jsonl", r"workers started [0-9.]+-([0-9.]+) s after",
     lambda: two_jobs("gap", "max"), d1),
    ("service: 60-kill runs", "service_faults.jsonl", r"(\d+) runs of 60 SIGKILLs", lambda: kills("runs"), whole),
    ("service: kills", "service_faults.jsonl", r"\((\d+) kills in all\)", lambda: kills("kills"), whole),
    ("service: jobs lost", "service_faults.jsonl", r"jobs lost (\d+)", lambda: kills("lost"), whole),
    ("service: jobs run twice", "service_faults.jsonl", r"run twice (\d+)", lambda: kills("run_twice"), whole),
    ("service: orphaned processes", "service_faults.jsonl", r"orphaned processes (\d+)",
     lambda: kills("orphaned_processes"), whole),
    ("service: /v1/jobs requests/s before the kept statements, lowest of three runs", "service_net/throughput_ab.jsonl",
     r"before it, ([0-9.]+)x-[0-9.]+x on `/v1/jobs`", lambda: min(v1_jobs_before_kept_statements()), x2),
    ("service: /v1/jobs requests/s before the kept statements, highest of three runs", "service_net/throughput_ab.jsonl",
     r"before it, [0-9.]+x-([0-9.]+)x on `/v1/jobs`", lambda: max(v1_jobs_before_kept_statements()), x2),
    ("service: /v1/jobs requests/s at 10429aa, run 1", "service_net/throughput_ab.jsonl",
     r"`/v1/jobs` ([0-9.]+)x, [0-9.]+x and\s+[0-9.]+x f41bc2c's requests/s",
     lambda: server_ab("service_net/throughput_ab.jsonl", "10429aa", "GET /v1/jobs", "requests_per_s", 0), x2),
    ("service: /v1/jobs requests/s at 10429aa, run 2", "service_net/throughput_ab.jsonl",
     r"`/v1/jobs` [0-9.]+x, ([0-9.]+)x and\s+[0-9.]+x f41bc2c's requests/s",
     lambda: server_ab("service_net/throughput_ab.jsonl", "10429aa", "GET /v1/jobs", "requests_per_s", 1), x2),
    ("service: /v1/jobs requests/s at 10429aa, run 3", "service_net/throughput_ab.jsonl",
     r"`/v1/jobs` [0-9.]+x, [0-9.]+x and\s+([0-9.]+)x f41bc2c's requests/s",
     lambda: server_ab("service_net/throughput_ab.jsonl", "10429aa", "GET /v1/jobs", "requests_per_s", 2), x2),
    ("service: /v1/jobs CPU per request at 10429aa, run 1", "service_net/throughput_ab.jsonl",
     r"\(CPU per request ([0-9.]+)x, [0-9.]+x, [0-9.]+x\)",
     lambda: server_ab("service_net/throughput_ab.jsonl", "10429aa", "GET /v1/jobs", "server_cpu_us_per_request", 0), x2),
    ("service: /healthz requests/s at 10429aa, run 3", "service_net/throughput_ab.jsonl",
     r"`/healthz` [0-9.]+x, [0-9.]+x and ([0-9.]+)x: met on",
     lambda: server_ab("service_net/throughput_ab.jsonl", "10429aa", "GET /healthz", "requests_per_s", 2), x2),
    ("service: paced /v1/jobs p50 at 10429aa", "service_net/latency_ab.jsonl",
     r"paced,\s+`/v1/jobs` p50 ([0-9.]+)x",
     lambda: server_ab("service_net/latency_ab.jsonl", "10429aa", "GET /v1/jobs", "p50_ms", 0), x2),
    ("service: hostile, LibTorch build at 2174287, p99", "service_net/hostile.jsonl",
     r"`/healthz` p99 at most ([0-9.]+) ms, max [0-9.]+ ms, memory at most [0-9.]+ MB and 10 s", lambda: hostile("full-2174287", "healthz_p99_ms"), d1),
    ("service: hostile, LibTorch build at 2174287, max", "service_net/hostile.jsonl",
     r"`/healthz` p99 at most [0-9.]+ ms, max ([0-9.]+) ms, memory at most [0-9.]+ MB and 10 s", lambda: hostile("full-2174287", "healthz_max_ms"), d1),
    ("service: hostile, LibTorch build at 2174287, peak memory", "service_net/hostile.jsonl",
     r"memory at most ([0-9.]+) MB and 10 s after", lambda: hostile("full-2174287", "rss_peak_mb"), d1),
    ("service: hostile, LibTorch build at 2174287, memory after", "service_net/hostile.jsonl",
     r"each attack within ([0-9.]+)% of\s+its start", lambda: hostile("full-2174287", "after_pct"), d1),
    ("GPU step: resnet20 on the CPU against f41bc2c, 20 steps", "gpu_step/cpu_pairs.jsonl",
     r"resnet20 ([0-9.]+)x and [0-9.]+x, small_cnn [0-9.]+x and [0-9.]+x \(every", lambda: cpu_pair("quiet-066b2cc", "resnet20"), x2),
    ("GPU step: resnet20 on the CPU against f41bc2c, 60 steps", "gpu_step/cpu_pairs.jsonl",
     r"resnet20 [0-9.]+x and ([0-9.]+)x, small_cnn [0-9.]+x and [0-9.]+x \(every", lambda: cpu_pair("quiet-066b2cc-60steps", "resnet20"), x2),
    ("GPU step: small_cnn on the CPU against f41bc2c, 20 steps", "gpu_step/cpu_pairs.jsonl",
     r"small_cnn ([0-9.]+)x and [0-9.]+x \(every", lambda: cpu_pair("quiet-066b2cc", "small_cnn"), x2),
    ("GPU step: small_cnn on the CPU against f41bc2c, 60 steps", "gpu_step/cpu_pairs.jsonl",
     r"small_cnn [0-9.]+x and ([0-9.]+)x \(every", lambda: cpu_pair("quiet-066b2cc-60steps", "small_cnn"), x2),
    ("GPU step: resnet20 on the CPU after the fix, 20 steps", "gpu_step/cpu_pairs.jsonl",
     r"after it resnet20 ([0-9.]+)x and", lambda: cpu_pair("quiet-f45e53b", "resnet20"), x2),
    ("GPU step: resnet20 on the CPU after the fix, 60 steps", "gpu_step/cpu_pairs.jsonl",
     r"after it resnet20 [0-9.]+x and ([0-9.]+)x", lambda: cpu_pair("quiet-f45e53b-60steps", "resnet20"), x2),
    ("GPU step: small_cnn on the CPU after the fix, 20 steps", "gpu_step/cpu_pairs.jsonl",
     r"small_cnn ([0-9.]+)x and [0-9.]+x: \*\*no regression", lambda: cpu_pair("quiet-f45e53b", "small_cnn"), x2),
    ("GPU step: small_cnn on the CPU after the fix, 60 steps", "gpu_step/cpu_pairs.jsonl",
     r"small_cnn [0-9.]+x and ([0-9.]+)x: \*\*no regression", lambda: cpu_pair("quiet-f45e53b-60steps", "small_cnn"), x2),
    ("service: attack probes passed after", "service_attacks.jsonl", r"(\d+) of \d+ attack probes pass",
     lambda: attacks("after: tula (TULA_WITH_TORCH=OFF) built at 48fe208", "passed"), whole),
    ("service: attack probes", "service_attacks.jsonl", r"\d+ of (\d+) attack probes pass",
     lambda: attacks("after: tula (TULA_WITH_TORCH=OFF) built at 48fe208", "probes"), whole),
    ("service: attack probes passed before", "service_attacks.jsonl", r"before the fixes (\d+) of \d+",
     lambda: attacks("before: tula (TULA_WITH_TORCH=OFF) built at ab993f2, the tree before the fixes",
                     "passed"), whole),
]


# The headline figures the README states again, by the figure's name above and the README's pattern for it.
README_FIGURES = {
    "knee vs default, small_cnn round 53, median of pairs": r"target ([0-9.]+)x faster than the default",
    "knee vs tuned large batch, small_cnn round 53, ratio of medians": r"default \(median of pair ratios\) and "
                                                                       r"([0-9.]+)x faster than tuned",
    "knee vs default, LeNet-5 round 58, median of pairs": r"its lead over the default \(([0-9.]+)x\)",
    "knee vs default, one node round 55, ratio of medians": r"this machine alone it is level with the default \(([0-9.]+)x\)",
    "knee vs default, Slurm round 62, median of pairs": r"beyond the seed spread: ([0-9.]+)x the default",
    "knee vs tuned large batch, Slurm round 62, ratio of medians": r"x the default \(median of pair ratios\) and ([0-9.]+)x standard large batch",
    "held out: whole job at the plan, median |error|": r"whole job at the plan median error ([0-9.]+)%",
    "held out: whole job beyond 25%": r"whole job at the plan median error [0-9.]+%, (\d+) beyond 25%",
    "held out: time left at half, median |error|": r"time left at half ([0-9.]+)%",
    "held out: the seed floor's median": r"blind to the seed errs ([0-9.]+)%",
    "CPU throughput, lowest median of pair ratios": r"PyTorch DDP\*\*: ([0-9.]+)x to",
    "CPU throughput, highest median of pair ratios": r"PyTorch DDP\*\*: [0-9.]+x to ([0-9.]+)x on CPU",
    "GPU resnet18 (first machine)": r"about even on resnet18 \(([0-9.]+)x and",
    "GPU resnet18 (second machine)": r"about even on resnet18 \([0-9.]+x and ([0-9.]+)x",
    "GPU resnet50": r"and ([0-9.]+)x on resnet50",
    "loader, 1 core": r"equal cores: ([0-9.]+)x \(1 core\)",
    "loader, 2 cores": r"\(1 core\) and ([0-9.]+)x \(2 cores\)",
    "generalization: AGS at 8192": r"AGS at batch 8192 reaches ([0-9.]+)%",
    "generalization: reference at 128": r"against the reference's ([0-9.]+)% at 128",
    "generalization: LAMB at 8192": r"\(LAMB ([0-9.]+)%, standard",
    "generalization: standard large batch at 8192": r"standard large batch ([0-9.]+)%\)",
    "service: kills": r"(\d+) SIGKILLs of the server lost no job",
    "service: attack probes passed after": r"(\d+) of \d+ attack probes pass",
}


def layout_check(readme):
    """The README's layout names every folder of src/ (a line starting `src/NAME`)."""
    src = os.path.join(HERE, "..", "src")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    named = set(re.findall(r"^src/([a-z_]+)", readme, re.M))
    missing = [d for d in folders if d not in named]
    return [("README: the layout names every src/ folder", "src/", f"{len(folders) - len(missing)} of {len(folders)}",
             f"{len(folders)} of {len(folders)}" + (f" (missing: {', '.join(missing)})" if missing else ""),
             not missing)]


def check(doc_text, patterns=None):
    """[(name, rows, docs value, recomputed value, ok)] for every figure of `doc_text` (its whitespace collapsed):
    all of FIGURES, or those `patterns` names, found by its patterns instead."""
    out = []
    for name, rows_name, pattern, compute, fmt in FIGURES:
        if patterns is not None:
            if name not in patterns:
                continue
            pattern = patterns[name]
        m = re.search(pattern, doc_text)
        stated = m.group(1) if m else None
        try:
            value = fmt(compute())
        except (FileNotFoundError, KeyError, StopIteration, ValueError, statistics.StatisticsError) as e:
            value = f"error: {e}"
        out.append((name, rows_name, stated, value, stated is not None and stated == value))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--doc", default=DOC)
    p.add_argument("--quiet", action="store_true", help="print only the figures that do not match")
    args = p.parse_args()
    with open(args.doc) as f:
        results = check(" ".join(f.read().split()))  # the page's line breaks do not matter
    if args.doc == DOC:
        with open(README) as f:
            readme = f.read()
        results += [("README: " + r[0],) + r[1:] for r in check(" ".join(readme.split()), README_FIGURES)]
        results += layout_check(readme)
    if not args.quiet:
        print("| figure | rows in bench/results/ | docs/results.md | recomputed | |")
        print("|---|---|---|---|---|")
    for name, rows_name, stated, value, ok in results:
        if not ok or not args.quiet:
            print(f"| {name} | {rows_name} | {stated if stated is not None else 'not stated'} | {value} | "
                  f"{'ok' if ok else 'MISMATCH'} |")
    bad = sum(not r[-1] for r in results)
    print(f"{len(results) - bad} of {len(results)} figures match their rows"
          + (f"; {bad} differ from them or are no longer stated" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
