#!/usr/bin/python3
"""Grades `tula tune`'s decision against a measured oracle on the emulated
cluster (scripts/emulated-cluster start, from catalogs/emulated.json).

Phases, each row appended to --out as it finishes (a rerun skips the cases
already there, so the bench resumes):
  grid      every configuration of GRID (machine type, nodes, per-worker
            batch), seeds 0 and 1: `tula tune --start-at 1xB --start-on
            TYPE:N --no-replan`, the optimizer tune uses (AGS), trained to
            --target; its time is the training's (the profile, measured once
            and cached, left out), its cost that time at the type's price
  tune      `tula tune --objective knee|fastest|cheapest`, seeds 0-2, each
            profiling anew (--no-profile-cache) and piloting: time and cost
            include both; with --profile-cache, a later job of its setup on
            this machine: the quick profile read from the round's cache
            (--work's cache), which the round fills before its jobs
  a         the default: 1 node of the faster type, batch 128, SGD at 0.05,
            no warmup, no re-plan
  b-screen  standard large batch's rate: SGD with linear scaling from 128 and
            a 0.5-epoch warmup at the largest configuration's global batch,
            each rate of --b-rates (default B_RATES) trained on the training set less a
            10,000-sample validation split and scored there (the test set is
            never looked at); on this machine's whole CPU, timing unused
  b         standard large batch at the largest configuration, at the rate
            the screen picked, seeds 0-2
The oracle of an objective is the grid configuration the planner's own rule
(tula_front_knee: Pareto front, Kneedle knee, objective) picks from the
measured median time and cost over seeds; regret is how much more time or
cost Tula's whole job took than the oracle's choice.

Round 1 (bench/results/decision_oracle.jsonl): jobs read the test split every
half epoch and stopped at the first reading at the target. Round 2
(bench/results/decision_oracle_round2.jsonl, --out, with --screen-from the
round-1 file for (b)'s rate): jobs read a 5,000-sample validation split every
quarter epoch, stop when it reaches the target and then read the test split
once (final_accuracy); the pilot runs on the faster type; the target forecast
uses the training loss too. Same grid, seeds, objectives and cases.
Round 3 (bench/results/decision_oracle_round3.jsonl, with --grid-from the
round-2 file as its oracle): tune jobs only, planned with the epochs floor
(no fewer epochs below the rate's reference batch than at it), seeds 0-2 as
before and 3-5 held out (--seeds).
The held-out case of round 3, fixed here before any of its runs: LeNet-5 to
84% validation accuracy, at most 8 epochs, the same grid (seed 0, then 1 as
time allows) and the tune jobs at seeds 0-2, in its own file:
  --model lenet5 --target 0.84 --max-epochs 8 --out bench/results/decision_oracle_lenet5.jsonl
After those ran (nothing changed in the models since), its grid seed 1, tune seeds 3-5 and the default (a) at
seeds 0-5 were added with --phases grid,tune,a --grid-seeds 1 --seeds 0,1,2,3,4,5.
Round 4 (the job history and the forecast weighed against the prior; knee only; commands in docs/notebook/round-04.md,
"The oracle, round 4"): held out, fixed before its runs, LeNet-5 to 86% (at most 12 epochs), seeds 0-5, each seed
with a history that fills as the seeds finish (--tune-extra="--history F") and as before (--tune-extra=--forecast-alone;
a job without --history in its extra arguments gets --no-history), in turn; new seeds 6-11 of small_cnn to 83% and
LeNet-5 to 84% with their own histories; then (a) at the same seeds. --predictions prints the prediction errors (no
grid needed), the plan's error taken apart (epochs and seconds per epoch) and the knee against (a) where the file has
both.
Round 5 (the running configuration timed as the clock does; bench/experiments/round5.json, "The oracle, round 5"): held out, fixed
before its runs, small_cnn to 83% seeds 12-16 and LeNet-5 to 86% seeds 6-10, knee, each seed with the change and with a
build of the code before it (--tula) in turn, each arm from a copy of round 4's history of its case.
Round 6 (evaluations warmed at launch; bench/experiments/round6.json, "Evaluations warmed at launch"): held out, fixed before its
runs, small_cnn to 83% seeds 17-19 and LeNet-5 to 86% seeds 11-13, knee, with the change and the code before in turn,
each arm from a copy of round 5's history of its case, each in its own --work.
Round 13 (bench/experiments/round13.json, "The oracle, round 13"): --phases paired --paired knee=...,fastest=...: for each
objective and seed, the oracle's configuration for it, the tune job, the same configuration again; regret within
the pair (--paired-table), since the host's speed moved by more than the regret within one day (round 12).
The batch schedule (--phases schedule, "A batch schedule given by hand"): SCHEDULES, each against its two ends fixed,
side by side, small_cnn to 83%, seeds 0-2, --out bench/results/decision_oracle_schedule.jsonl.
One node (--one-node, "The headline on one node"): the same phases on this machine alone (tune's local resources and
backend, billed whole at $0.10 an hour), over its own grid (1 and 2 workers at 32, 128 and 512 per worker, seeds 0
and 1), knee only (cost is time there, so every objective is one), (a) 1 worker at 128 with SGD, (b) 2 x 1024 at the
rate round 1 screened on the validation split for the same global batch (--screen-from decision_oracle.jsonl).

  bench/decision_oracle.py [--phases grid,tune,a,b-screen,b] [--grid-seeds 0,1] [--seeds 0,1,2] [--out F]
                           [--grid-from F] [--grid-only machine:nodes:batch,...] [--grid-add machine:nodes:batch,...]
                           [--table]
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import time

from bench_common import append_row, below_chord, git_state, rows_done

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
# Fixed before any run: each type at every node count it has, batches 32 and 128, and the largest batch on the
# largest node count of each type.
GRID = [(t, n, b) for t, counts in (("emu-half", (1, 2, 4)), ("emu-one", (1, 2))) for n in counts for b in (32, 128)]
GRID += [("emu-half", 4, 512), ("emu-one", 2, 512)]
GRID_SEEDS = (0, 1)
SEEDS = (0, 1, 2)
OBJECTIVES = ("knee", "fastest", "cheapest")
LARGEST = ("emu-half", 4, 512)  # the most nodes, the largest batch of the grid: global 2048
# SGD's rate at batch 128, linearly scaled to 2048. First planned as 0.025-0.2; 0.05 diverged (10% on validation)
# and 0.025 rose unsteadily to 63% in 8 epochs, so the grid was moved down before 0.1 ran.
B_RATES = (0.00625, 0.0125, 0.025, 0.05)
DEFAULT = ("emu-one", 1, 128)
VALIDATION = 10000
# One node (--one-node): this whole machine, billed whole at tune's --price-per-hour, with one or two workers (the
# count in a configuration is then workers on the machine, not nodes). Fixed before any run: 1 and 2 workers at 32,
# 128 and 512 per worker; the largest configuration, for (b), 2 x 1024 (global 2048, the batch (b)'s rate was
# screened at on the emulated cluster, so --screen-from that round's rows gives its rate).
ONE_NODE_GRID = [("local", w, b) for w in (1, 2) for b in (32, 128, 512)]
ONE_NODE_LARGEST = ("local", 2, 1024)
ONE_NODE_DEFAULT = ("local", 1, 128)
ONE_NODE_PRICE = 0.10
# The batch schedule against fixed configurations (--phases schedule), fixed before any of its runs: on the oracle's
# fastest and knee types at their node counts of the grid (2 x emu-one, 1 x emu-one), 32 per worker until 0.75
# epochs (about half of what these jobs need) and 128 per worker after (the direction the grown B_noise points),
# against each end fixed throughout, side by side: each seed runs the three in turn, the order rotated by seed.
SCHEDULES = [("emu-one", 2, 32, 0.75, 128), ("emu-one", 1, 32, 0.75, 128)]


def price_of(args, machine_type):
    if args.one_node:
        return ONE_NODE_PRICE
    return next(m["price_per_hour"] for m in args.catalog_json["machine_types"] if m["name"] == machine_type)


def tune(args, case, extra, max_epochs=None):
    out_dir = os.path.join(args.work, case.replace(":", "-"))
    shutil.rmtree(out_dir, ignore_errors=True)
    # Each job's prior is what its case says: the job history only where --tune-extra names one (rows from before
    # the history planned with the stated prior, as --no-history does).
    if "--history" not in extra:
        extra = list(extra) + ["--no-history"]
    where = (["--resources", "local", "--backend", "local", "--price-per-hour", str(ONE_NODE_PRICE)] if args.one_node
             else ["--resources", args.catalog, "--backend", "emulated"])
    cmd = [args.tula, "tune", "--model", args.model, "--dataset", "fashion-mnist", "--target-accuracy",
           str(args.target), "--max-epochs", str(max_epochs or args.max_epochs)] + where + [
           "--progress", "lines", "--on-out-of-reach", "continue", "--out", out_dir] + extra
    env = dict(os.environ, TULA_CACHE_DIR=os.path.join(args.work, "cache"))
    start = time.time()
    with open(out_dir + ".log", "w") as log:
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=log, env=env).returncode
    wall = time.time() - start
    rep = json.load(open(os.path.join(out_dir, "report.json")))
    kept = os.path.join(os.path.splitext(args.out)[0], case.replace(":", "-") + ".report.json")
    os.makedirs(os.path.dirname(kept), exist_ok=True)
    shutil.copyfile(os.path.join(out_dir, "report.json"), kept)
    m, ph = rep.get("measured") or {}, rep.get("phases") or {}
    return {"exit": rc, "wall_s": wall, "state": rep.get("state"), "reached": rep.get("state") == "succeeded",
            "total_s": ph.get("total_s"), "profile_s": ph.get("profile_s"), "pilot_s": ph.get("pilot_s"),
            "restart_s": ph.get("restart_s"), "cost": m.get("cost"), "best_accuracy": m.get("best_accuracy"),
            "evaluated_on": m.get("evaluated_on", "test"), "final_accuracy": m.get("final_accuracy"),
            "epochs": m.get("epochs"), "steps": m.get("steps"), "chosen": rep.get("chosen"),
            "predicted": rep.get("predicted"), "remaining_error": rep.get("remaining_error"),
            "replans": [r for r in rep.get("replans", []) if r.get("applied")], "give_up": rep.get("give_up"),
            "report": os.path.relpath(kept, ROOT), "command": " ".join(cmd)}


def fixed(args, case, config, seed, extra=(), max_epochs=None):
    machine_type, nodes, batch = config
    # One node: `nodes` counts the workers on this machine, billed whole whatever their number.
    at = (["--start-at", f"{nodes}x{batch}"] if args.one_node
          else ["--start-at", f"1x{batch}", "--start-on", f"{machine_type}:{nodes}"])
    row = tune(args, case, at + ["--no-replan", "--seed", str(seed)] + list(extra), max_epochs)
    # The oracle's configuration is known beforehand: its time is the training's, without the profile.
    row["time_s"] = row["total_s"] - (row["profile_s"] or 0)
    row["cost"] = price_of(args, machine_type) * (1 if args.one_node else nodes) * row["time_s"] / 3600
    return row


def screen(args, lr):
    machine_type, nodes, batch = args.largest
    metrics = os.path.join(args.work, f"b-screen-{lr}.metrics.jsonl")
    cmd = [args.tula, "train", "--model", args.model, "--dataset", "fashion-mnist", "--nproc", str(nodes),
           "--batch-size", str(batch), "--optimizer", "sgd", "--lr", str(lr), "--lr-scaling", "linear",
           "--reference-batch", "128", "--warmup-epochs", "0.5", "--schedule", "constant", "--momentum", "0.9",
           "--weight-decay", "5e-4", "--epochs", f"{args.b_max_epochs:g}", "--target-accuracy", str(args.target),
           "--validation-size", str(VALIDATION),
           "--validation-seed", "0", "--eval-every", str(math.ceil(60000 / (nodes * batch) / 2)), "--metrics",
           metrics, "--progress", "none", "--seed", "0"]
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    curve = [(r["epoch"], r["test_accuracy"]) for r in map(json.loads, open(metrics)) if "test_accuracy" in r]
    reached = next((e for e, a in curve if a >= args.target), None)
    return {"exit": rc, "lr": lr, "validation_curve": curve, "best_validation": max((a for _, a in curve), default=0),
            "epoch_reached": reached, "command": " ".join(cmd)}


def screened_rate(rows, rates):
    """Of the screen's `rates`, the one whose validation accuracy reached the target first; none reached: the best
    accuracy. None until every rate has its row."""
    screens = [r for r in rows if r["phase"] == "b-screen" and r["lr"] in rates]
    if {r["lr"] for r in screens} != set(rates):
        return None
    reached = [r for r in screens if r["epoch_reached"] is not None]
    if reached:
        return min(reached, key=lambda r: (r["epoch_reached"], -r["best_validation"]))["lr"]
    return max(screens, key=lambda r: r["best_validation"])["lr"]


def cases(args):
    """Every case in run order: seed by seed, so a stopped bench leaves whole seeds behind it."""
    for lr in args.b_rates:
        yield f"b-screen:{lr}", "b-screen", lambda lr=lr: screen(args, lr)
    for seed in sorted(set(args.seeds) | set(args.grid_seeds)):
        if seed in args.grid_seeds:
            for config in args.grid:
                yield (f"grid:{config[0]}:{config[1]}:{config[2]}:s{seed}", "grid",
                       lambda c=config, s=seed: run_config(args, f"grid:{c[0]}:{c[1]}:{c[2]}:s{s}", c, s))
        if seed not in args.seeds:
            continue
        for objective in args.objectives:
            case = f"tune:{objective}:s{seed}"
            yield case, "tune", lambda o=objective, s=seed, c=case: run_objective(args, c, o, s)
        case = f"a:s{seed}"
        yield case, "a", lambda s=seed, c=case: run_default(args, c, s)
        case = f"b:s{seed}"
        yield case, "b", lambda s=seed, c=case: run_large_batch(args, c, s)


def run_objective(args, case, objective, seed):
    """(c) and the tune phase: `tula tune --objective`, profiling anew (or reading the cache) and piloting."""
    cache = [] if args.profile_cache else ["--no-profile-cache"]
    return dict(tune(args, case, ["--objective", objective, "--seed", str(seed)] + cache + args.tune_extra),
                objective=objective, seed=seed)


def run_config(args, case, config, seed):
    """One configuration trained to the target as the grid trains it (AGS, the profile left out of its time)."""
    return dict(fixed(args, case, config, seed), machine=config[0], nodes=config[1], batch=config[2], seed=seed)


def method_of(phase):
    """The headline's letter for a row's phase: the tune job is (c)."""
    return "c" if phase == "tune" else phase


def run_default(args, case, seed):
    """(a) the default: 1 node of the faster type, batch 128, SGD at 0.05, no warmup."""
    return dict(fixed(args, case, args.default, seed, ["--optimizer", "sgd", "--lr", "0.05", "--warmup-epochs", "0"]
                      + args.a_extra.split()), seed=seed)


def run_large_batch(args, case, seed):
    """(b) standard large batch: the largest configuration, SGD linearly scaled from 128 with a half-epoch warmup,
    at the rate the b-screen rows (--screen-from, else --out's) picked on the validation split."""
    screens = args.screen_from or args.out
    lr = screened_rate([json.loads(l) for l in open(screens)] if os.path.exists(screens) else [], args.b_rates)
    if lr is None:
        raise RuntimeError("b needs the b-screen rows first")
    return dict(fixed(args, case, args.largest, seed, ["--optimizer", "sgd", "--lr", str(lr), "--lr-scaling", "linear",
                                                       "--reference-batch", "128", "--warmup-epochs", "0.5"],
                      args.b_max_epochs), seed=seed, lr=lr)


def headline_cases(args):
    """The headline phase's cases: per seed (a), (b), (c) the knee tune job and (d) the oracle's knee configuration
    (--headline-knee, fixed beforehand), one after another in an order rotated by seed, so that the host's speed,
    which moves within a day by more than the methods differ, falls on every method alike. Each row keeps the phase
    its method has elsewhere ("a", "b", "tune", "d") and the hour it started."""
    def stamped(run):
        start = time.time()
        return dict(run(), started=start, headline=True)
    for seed in args.seeds:
        arms = [(f"a:s{seed}", "a", lambda s=seed: run_default(args, f"a:s{s}", s)),
                (f"b:s{seed}", "b", lambda s=seed: run_large_batch(args, f"b:s{s}", s)),
                (f"tune:knee:s{seed}", "tune", lambda s=seed: run_objective(args, f"tune:knee:s{s}", "knee", s)),
                (f"d:s{seed}", "d", lambda s=seed: run_config(args, f"d:s{s}", args.headline_knee, s))]
        shift = seed % len(arms)
        for case, phase, run in arms[shift:] + arms[:shift]:
            if method_of(phase) in args.headline_methods:
                yield case, "headline", lambda r=run, p=phase: dict(stamped(r), phase=p)


def headline_table(args):
    """The headline from the headline phase's rows: (a)-(d) per seed in the order they ran, medians, both ratios of
    (c) against each, and whether (c) is ahead by more than the seed spread (its slowest seed faster than the other
    method's fastest, and every pair ratio above 1)."""
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    rows = [r for r in rows if r.get("headline")]
    names = {"a": f"(a) default: {describe(args.default)}, SGD 0.05, no warmup",
             "b": f"(b) standard large batch: {describe(args.largest)}, SGD linear scaling, 0.5-epoch warmup",
             "tune": "(c) tula tune --objective knee (profile and pilot included)",
             "d": f"(d) the oracle's knee: {describe(args.headline_knee)}, AGS"}
    key = lambda r: "total_s" if r["phase"] == "tune" else "time_s"
    names = {m: name for m, name in names.items() if method_of(m) in args.headline_methods}
    by = {m: {r["seed"]: r for r in rows if r["phase"] == m} for m in names}
    seeds = sorted(set.intersection(*(set(v) for v in by.values()))) if all(by.values()) else []
    print(f"**The headline** ({os.path.relpath(args.out, ROOT)}): {args.model} to {args.target:.0%}, every method at "
          f"each seed one after another, the order rotated by seed\n")
    print("| seed | order run (UTC start) | (a) | (b) | (c) | (d) | (c)'s choice | final test accuracy (a) / (b) / (c) / (d) |")
    print("|---|---|---|---|---|---|---|---|")
    for s in sorted({r["seed"] for r in rows}):
        ran = sorted((r for r in rows if r["seed"] == s), key=lambda r: r["started"])
        order = ", ".join(f"{method_of(r['phase'])} {time.strftime('%H:%M', time.gmtime(r['started']))}"
                          for r in ran)
        cell = lambda m: (f"{by[m][s][key(by[m][s])]:.0f} s" + ("" if by[m][s]["reached"] else " (missed)")
                          if s in by.get(m, {}) else "-")
        acc = lambda m: (f"{by[m][s]['final_accuracy']:.2%}" if s in by.get(m, {}) and by[m][s].get("final_accuracy")
                         else "-")
        choice = describe(chosen_config(by["tune"][s])) if s in by["tune"] else "-"
        print(f"| {s} | {order} | {cell('a')} | {cell('b')} | {cell('tune')} | {cell('d')} | {choice} | "
              f"{acc('a')} / {acc('b')} / {acc('tune')} / {acc('d')} |")
    if not seeds:
        return
    print(f"\nOver the {len(seeds)} seeds every method ran ({', '.join(map(str, seeds))}):\n")
    print("| method | time per seed | median time | cost per seed | median cost | epochs | reached |")
    print("|---|---|---|---|---|---|---|")
    for m, name in names.items():
        rs = [by[m][s] for s in seeds]
        times = ", ".join(f"{r[key(r)]:.0f} s" for r in rs)
        costs = ", ".join(f"{r['cost']:.5f}" for r in rs)
        epochs = ", ".join(f"{r['epochs']:.2f}" for r in rs)
        print(f"| {name} | {times} | {median([r[key(r)] for r in rs]):.0f} s | {costs} | "
              f"{median([r['cost'] for r in rs]):.5f} | {epochs} | {sum(r['reached'] for r in rs)} of {len(rs)} |")
    c = {s: by["tune"][s] for s in seeds}
    for m in ("a", "b", "d"):
        if m not in by:
            continue
        o = {s: by[m][s] for s in seeds}
        for what, kc, ko in (("time", "total_s", "time_s"), ("cost", "cost", "cost")):
            pairs = [o[s][ko] / c[s][kc] for s in seeds]
            ahead = max(c[s][kc] for s in seeds) < min(o[s][ko] for s in seeds)
            print(f"\n({m}) / (c) {what}: ratio of medians {median([o[s][ko] for s in seeds]) / median([c[s][kc] for s in seeds]):.2f}x; "
                  f"median of pair ratios {median(pairs):.2f}x ({', '.join(f'{x:.2f}' for x in pairs)}); (c)'s "
                  f"{'slowest' if what == 'time' else 'dearest'} seed {'below' if ahead else 'not below'} ({m})'s "
                  f"{'fastest' if what == 'time' else 'cheapest'}: {'ahead' if ahead and min(pairs) > 1 else 'not ahead'} "
                  f"by more than the seed spread")


def schedule_cases(args):
    """The schedule phase's cases: per seed and schedule, its two fixed ends and the schedule, in rotated order."""
    for seed in args.seeds:
        for machine, nodes, first, epochs, then in SCHEDULES:
            arms = [(f"sched-fixed:{machine}:{nodes}:{first}:s{seed}", (machine, nodes, first), []),
                    (f"sched:{machine}:{nodes}:{first}-{then}@{epochs}:s{seed}", (machine, nodes, first),
                     ["--then-at", f"{epochs}:1x{then}"]),
                    (f"sched-fixed:{machine}:{nodes}:{then}:s{seed}", (machine, nodes, then), [])]
            shift = seed % len(arms)
            for case, config, extra in arms[shift:] + arms[:shift]:
                yield case, "schedule", lambda c=case, cf=config, e=extra, s=seed, sch=(first, epochs, then): dict(
                    fixed(args, c, cf, s, e), machine=cf[0], nodes=cf[1], batch=cf[2], seed=s,
                    schedule=list(sch) if e else None)


def paired_cases(args):
    """The paired phase's cases: per seed and objective, the oracle's configuration for it (--paired), the tune job,
    and that configuration again, so the pair's mean stands for the oracle at the hour the job ran."""
    for objective, config in args.paired:
        for seed in args.seeds:
            def oracle_run(when, c=config, s=seed, o=objective):
                case = f"paired:{o}:{when}:s{s}"
                return case, "paired", lambda: dict(run_config(args, case, c, s), objective=o, when=when)
            yield oracle_run("before")
            # Run in the paired phase, kept as a tune row (the run's dict names its phase last).
            case = f"tune:{objective}:s{seed}"
            yield case, "paired", lambda o=objective, s=seed, c=case: dict(run_objective(args, c, o, s), phase="tune")
            yield oracle_run("after")


def paired_table(args):
    """Regret within each pair: the tune job's whole time and cost against the geometric mean of the oracle's
    configuration run just before and just after it (the same seed), and how far the clock moved across the pair."""
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    oracle = {(r["objective"], r["seed"], r["when"]): r for r in rows if r["phase"] == "paired"}
    print("| objective | oracle's configuration | seed | before / after | after / before | Tula's choice | Tula time / cost "
          "| time regret | cost regret |")
    print("|---|---|---|---|---|---|---|---|---|")
    regrets = {}
    for r in sorted((r for r in rows if r["phase"] == "tune"), key=lambda r: (OBJECTIVES.index(r["objective"]), r["seed"])):
        before, after = oracle.get((r["objective"], r["seed"], "before")), oracle.get((r["objective"], r["seed"], "after"))
        if not (before and after and before["reached"] and after["reached"] and r["reached"]):
            continue
        o_time = math.sqrt(before["time_s"] * after["time_s"])
        o_cost = math.sqrt(before["cost"] * after["cost"])
        t, c = r["total_s"] / o_time - 1, r["cost"] / o_cost - 1
        regrets.setdefault(r["objective"], []).append((t, c))
        config = (before["machine"], before["nodes"], before["batch"])
        print(f"| {r['objective']} | {describe(config)} | {r['seed']} | {before['time_s']:.0f} / {after['time_s']:.0f} s | "
              f"{after['time_s'] / before['time_s']:.2f} | {describe(chosen_config(r))} | {r['total_s']:.0f} s / "
              f"{r['cost']:.5f} | {t:+.1%} | {c:+.1%} |")
    print()
    for objective, xs in regrets.items():
        print(f"{objective}: time regret {', '.join(f'{t:+.1%}' for t, _ in xs)} (median {median([t for t, _ in xs]):+.1%}); "
              f"cost regret {', '.join(f'{c:+.1%}' for _, c in xs)} (median {median([c for _, c in xs]):+.1%}); "
              f"within 5%: time {sum(t <= 0.05 for t, _ in xs)} of {len(xs)}, cost {sum(c <= 0.05 for _, c in xs)} of {len(xs)}")
    if args.grid_from and "knee" in regrets:
        paired_knee_criterion(args, rows, oracle)


def paired_knee_criterion(args, rows, oracle):
    """The knee's own criterion with the pairs: the day's measured front (--grid-from, --oracle-seeds, --grid-add)
    brought to each job's hour by the clock factor its pair gives (the pair's geometric mean over the day's median
    for that configuration), assuming the hour moved every configuration alike, and the job placed against it."""
    configs, points, picks, _ = oracle_choices(args, grid_rows(args, []))
    front = [points[i] for i in picks["front"]]
    knee = points[picks["knee"]]
    best = below_chord(front, knee["time_s"], knee["cost"])
    print(f"\nThe knee's own criterion, the front of {', '.join(os.path.relpath(f, ROOT) for f in args.grid_from)} "
          f"(seeds {', '.join(map(str, args.oracle_seeds or []))}; its knee {describe(configs[picks['knee']])}, "
          f"{knee['time_s']:.0f} s, {knee['cost']:.5f}, at {best:+.3f}):\n")
    print("| seed | clock factor (pair / day) | Tula time / cost at the day's clock | distance below the chord | "
          "regret (the oracle's knee's less Tula's) |")
    print("|---|---|---|---|---|")
    for r in sorted((r for r in rows if r["phase"] == "tune" and r["objective"] == "knee"), key=lambda r: r["seed"]):
        before, after = oracle.get(("knee", r["seed"], "before")), oracle.get(("knee", r["seed"], "after"))
        config = (before["machine"], before["nodes"], before["batch"])
        if config not in configs:
            continue
        factor = math.sqrt(before["time_s"] * after["time_s"]) / points[configs.index(config)]["time_s"]
        t, c = r["total_s"] / factor, r["cost"] / factor
        d = below_chord(front, t, c)
        print(f"| {r['seed']} | {factor:.3f} | {t:.0f} s / {c:.5f} | {d:+.3f} | {best - d:+.3f} |")


def schedules(args):
    """The schedule phase's table: per schedule and seed the three arms' times, then the schedule against each end."""
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    rows = [r for r in rows if r["phase"] == "schedule"]
    print("| nodes | seed | first batch fixed | schedule | second batch fixed "
          "| schedule's epochs (fixed: first, second) | reached |")
    print("|---|---|---|---|---|---|---|")
    summaries = []
    for machine, nodes, first, epochs, then in SCHEDULES:
        def arm(r):
            if r["machine"] != machine or r["nodes"] != nodes:
                return None
            if r.get("schedule"):
                return "s" if r["schedule"] == [first, epochs, then] else None
            return "f" if r["batch"] == first else "t" if r["batch"] == then else None
        by_seed = {}
        for r in rows:
            if k := arm(r):
                by_seed.setdefault(r["seed"], {})[k] = r
        for seed in sorted(by_seed):
            a = by_seed[seed]
            cell = lambda k: f"{a[k]['time_s']:.0f} s" if k in a else "-"
            ep = lambda k: f"{a[k]['epochs']:.2f}" if k in a else "-"
            reached = sum(1 for k in a if a[k]["reached"])
            print(f"| {nodes} x {machine} | {seed} | {cell('f')} (B = {nodes * first}) | {cell('s')} | "
                  f"{cell('t')} (B = {nodes * then}) | {ep('s')} ({ep('f')}, {ep('t')}) | {reached} of {len(a)} |")
        whole = [a for a in by_seed.values() if all(k in a and a[k]["reached"] for k in "fst")]
        if not whole:
            continue
        med = {k: median([a[k]["time_s"] for a in whole]) for k in "fst"}
        for k, b in (("f", first), ("t", then)):
            pairs = [a["s"]["time_s"] / a[k]["time_s"] for a in whole]
            summaries.append(
                f"{nodes} x {machine}, the schedule against B = {nodes * b} fixed: ratio of median times "
                f"{med['s'] / med[k]:.2f}x (medians {med['s']:.0f} s and {med[k]:.0f} s); median of pair ratios "
                f"{median(pairs):.2f}x ({', '.join(f'{x:.2f}' for x in pairs)}) over {len(whole)} seeds")
        spread = {k: (min(a[k]["time_s"] for a in whole), max(a[k]["time_s"] for a in whole)) for k in "fst"}
        best = min("ft", key=lambda k: med[k])
        summaries.append(f"{nodes} x {machine}: the best fixed end by median time is B = "
                         f"{nodes * (first if best == 'f' else then)}; the seeds' range: schedule "
                         f"{spread['s'][0]:.0f}-{spread['s'][1]:.0f} s, B = {nodes * first} "
                         f"{spread['f'][0]:.0f}-{spread['f'][1]:.0f} s, B = {nodes * then} "
                         f"{spread['t'][0]:.0f}-{spread['t'][1]:.0f} s")
    print()
    for line in summaries:
        print(line)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def oracle_choices(args, grid_rows):
    """Per configuration the median time and cost over seeds (a seed that missed the target: not a candidate),
    and the index each objective picks by the planner's rule."""
    by_config = {}
    for r in grid_rows:
        by_config.setdefault((r["machine"], r["nodes"], r["batch"]), []).append(r)
    configs = [c for c in args.grid if c in by_config and all(r["reached"] for r in by_config[c])]
    points = [{"time_s": median([r["time_s"] for r in by_config[c]]),
               "cost": median([r["cost"] for r in by_config[c]])} for c in configs]
    out = subprocess.run([args.front_knee], input="".join(json.dumps(p) + "\n" for p in points), text=True,
                         capture_output=True, check=True).stdout
    picks = json.loads(out)
    return configs, points, picks, by_config


def describe(c):
    return f"{c[1]} x {c[0]}, b {c[2]} (B = {c[1] * c[2]})"


def chosen_config(row):
    """(machine type, workers, per-worker batch): on the emulated cluster one worker a node, so workers are nodes."""
    c = row.get("chosen") or {}
    return (c.get("machine"), (c.get("nodes") or 0) * (c.get("workers_per_node") or 1), c.get("batch_per_worker"))


def earlier_rows(args):
    """The rows of --grid-from's files (earlier rounds), in the order given."""
    return [json.loads(l) for f in args.grid_from for l in open(f) if l.strip()]


def grid_rows(args, rows):
    """The oracle's grid: --grid-from's rows (an earlier round's) or --out's own."""
    if args.grid_from:
        rows = earlier_rows(args)
    return [r for r in rows if r["phase"] == "grid" and (args.oracle_seeds is None or r["seed"] in args.oracle_seeds)]


def table(args):
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    grid = grid_rows(args, rows)
    configs, points, picks, by_config = oracle_choices(args, grid)
    split = ", ".join(sorted({r.get("evaluated_on", "test") for r in grid}))
    seeds = ", ".join(map(str, sorted({r["seed"] for r in grid})))
    source = f" ({', '.join(os.path.relpath(f, ROOT) for f in args.grid_from)})" if args.grid_from else ""
    print(f"**The grid**{source} as measured: {args.model} to {args.target:.0%} {split} accuracy, seeds {seeds}; "
          f"time without the profile\n")
    print("| configuration | time per seed | median time | cost per seed (USD) | median cost | epochs | on the front |")
    print("|---|---|---|---|---|---|---|")
    front = set(picks["front"])
    for c in args.grid:
        rs = sorted(by_config.get(c, []), key=lambda r: r["seed"])
        if not rs:
            continue
        marks = [k for k in OBJECTIVES if c in configs and picks[k] == configs.index(c)]
        on_front = c in configs and configs.index(c) in front
        times = ", ".join(f"{r['time_s']:.0f} s" + ("" if r["reached"] else " (missed)") for r in rs)
        costs = ", ".join(f"{r['cost']:.5f}" for r in rs)
        epochs = ", ".join(f"{r['epochs']:.2f}" for r in rs)
        mark = " (" + ", ".join(marks) + ")" if marks else ""
        print(f"| {describe(c)} | {times} | {median([r['time_s'] for r in rs]):.0f} s | {costs} | "
              f"{median([r['cost'] for r in rs]):.5f} | {epochs} | {'yes' if on_front else 'no'}{mark} |")
    print("\n**Regret** of `tula tune` (whole job: profile, pilot, training) against the oracle's choice for the objective\n")
    print("| objective | oracle's choice | oracle time / cost | seed | Tula's first choice | re-plans | Tula time / cost "
          "| time regret | cost regret | profile + pilot | time regret of the training alone | reached |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for objective in OBJECTIVES:
        i = picks[objective]
        o = points[i]
        for r in sorted((r for r in rows if r["phase"] == "tune" and r["objective"] == objective), key=lambda r: r["seed"]):
            overhead = (r["profile_s"] or 0) + (r["pilot_s"] or 0)
            print(f"| {objective} | {describe(configs[i])} | {o['time_s']:.0f} s / {o['cost']:.5f} | {r['seed']} | "
                  f"{describe(chosen_config(r))} | {len(r['replans'])} | {r['total_s']:.0f} s / {r['cost']:.5f} | "
                  f"{r['total_s'] / o['time_s'] - 1:+.1%} | {r['cost'] / o['cost'] - 1:+.1%} | {overhead:.0f} s | "
                  f"{(r['total_s'] - overhead) / o['time_s'] - 1:+.1%} | {'yes' if r['reached'] else 'no'} |")
    knee_criterion(rows, configs, points, picks)
    print("\n**Predictions** of the tune jobs: whole job at the plan, and the time left at 25, 50 and 75% of the run\n")
    print("| objective | seed | predicted at the plan | measured | error | cost predicted | cost measured | cost error "
          "| remaining-time error at 25 / 50 / 75% |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in sorted((r for r in rows if r["phase"] == "tune"), key=lambda r: (OBJECTIVES.index(r["objective"]), r["seed"])):
        p = r.get("predicted") or {}
        if not p:
            continue
        errs = " / ".join(f"{e['error']:+.1%}" for e in (r.get("remaining_error") or [])) or "-"
        print(f"| {r['objective']} | {r['seed']} | {p['time_s']:.0f} s | {r['total_s']:.0f} s | "
              f"{p['time_s'] / r['total_s'] - 1:+.1%} | {p['cost']:.5f} | {r['cost']:.5f} | {p['cost'] / r['cost'] - 1:+.1%} | "
              f"{errs} |")
    summary(rows, picks, points)
    decomposition(rows)
    where = "on this machine (one node)" if args.one_node else "on the emulated cluster"
    print(f"\n**The headline** {where}: wall time and cost to the target (tune: profile and pilot included)\n")
    print("| method | configuration | time per seed | median time | cost per seed | median cost | reached |")
    print("|---|---|---|---|---|---|---|")
    knee_i = picks["knee"]
    knee_oracle = [r for r in grid if (r["machine"], r["nodes"], r["batch"]) == configs[knee_i]]
    # A round that ran tune jobs alone (--grid-from) takes the baselines, like the grid, from the earlier round.
    earlier = earlier_rows(args)
    baselines = rows if any(r["phase"] in ("a", "b") for r in rows) else earlier
    methods = [(f"(a) default: {describe(args.default)}, SGD 0.05", [r for r in baselines if r["phase"] == "a"], "time_s"),
               ("(b) standard large batch, rate tuned on validation", [r for r in baselines if r["phase"] == "b"],
                "time_s"),
               ("(c) tula tune --objective knee", [r for r in rows if r["phase"] == "tune" and r["objective"] == "knee"
                                                   and r["seed"] in args.seeds], "total_s"),
               (f"(d) the oracle's knee: {describe(configs[knee_i])}", knee_oracle, "time_s")]
    medians = {}
    for name, rs, key in methods:
        rs = sorted(rs, key=lambda r: r["seed"])
        if not rs:
            continue
        medians[name[:3]] = (median([r[key] for r in rs]), median([r["cost"] for r in rs]), {r["seed"]: r[key] for r in rs})
        times = ", ".join(f"{r[key]:.0f} s" for r in rs)
        costs = ", ".join(f"{r['cost']:.5f}" for r in rs)
        configs_run = ", ".join(describe(chosen_config(r)) for r in rs) if name.startswith("(c)") else "-"
        print(f"| {name} | {configs_run} | {times} | {medians[name[:3]][0]:.0f} s | {costs} | "
              f"{medians[name[:3]][1]:.5f} | {sum(r['reached'] for r in rs)} of {len(rs)} |")
    if "(c)" in medians:
        c_time, _, c_seeds = medians["(c)"]
        for ref in ("(a)", "(b)", "(d)"):
            if ref not in medians:
                continue
            r_time, _, r_seeds = medians[ref]
            pairs = [r_seeds[s] / c_seeds[s] for s in c_seeds if s in r_seeds]
            paired = (f"median of pair ratios {median(pairs):.2f}x over {len(pairs)} seeds" if pairs
                      else "no pairs (no seed in common)")
            print(f"\n(c) against {ref}: ratio of median times {r_time / c_time:.2f}x; {paired}")
    screens = [r for r in rows if r["phase"] == "b-screen"]
    if screens:
        print("\n(b)'s rate screen (validation split, never the test set):",
              "; ".join(f"lr {r['lr']}: best {r['best_validation']:.2%}, target at epoch {r['epoch_reached']}"
                        for r in screens), f"-> {screened_rate(rows, args.b_rates)}")


def knee_criterion(rows, configs, points, picks):
    """The knee's regret by its own criterion: each knee job's whole job (time, cost) placed against the oracle's
    measured front, its distance below the front's chord against the oracle's knee's (the largest on the front)."""
    knee_rows = sorted((r for r in rows if r["phase"] == "tune" and r["objective"] == "knee"), key=lambda r: r["seed"])
    front = [points[i] for i in picks["front"]]
    if not knee_rows or len(front) < 2:
        return
    best = below_chord(front, points[picks["knee"]]["time_s"], points[picks["knee"]]["cost"])
    print(f"\n**The knee's own criterion**: the distance below the chord of the oracle's front ({len(front)} points: "
          + "; ".join(f"{describe(configs[i])} {points[i]['time_s']:.0f} s, {points[i]['cost']:.5f}" for i in picks["front"])
          + f"), Kneedle's difference on the front's normalized time and cost; the oracle's knee "
          f"{describe(configs[picks['knee']])} at {best:+.3f}\n")
    print("| seed | Tula's choice | Tula time / cost | distance below the chord | regret (the oracle's knee's less Tula's) |")
    print("|---|---|---|---|---|")
    for r in knee_rows:
        d = below_chord(front, r["total_s"], r["cost"])
        print(f"| {r['seed']} | {describe(chosen_config(r))} | {r['total_s']:.0f} s / {r['cost']:.5f} | {d:+.3f} | "
              f"{best - d:+.3f} |")


def is_plan_move(move):
    """Whether a re-plans row is the plan's own move after the pilot (a row whether applied or declined since
    9114c82), not a watch's."""
    return move.get("reason", "").startswith("the plan after the pilot")


def step_at_plan(report):
    """The step time the plan priced the running configuration at: where the job stayed at the pilot's placement the
    re-fit is calibrated to the pilot's measured step, so it is that measurement (kept with the move the plan declined
    after the pilot); where it moved, or where the plan kept the pilot's placement, the chosen candidate's. None where
    neither is in the report. (Since 9114c82 the plan's move after the pilot is a row of the re-plans when applied
    too; its measurement is then the pilot's configuration's, not the running one's.)"""
    for move in report.get("replans") or []:
        if is_plan_move(move) and not move.get("applied"):
            return (move.get("numbers") or {}).get("iteration_s_measured")
    run, chosen = report.get("chosen") or {}, (report.get("plan") or {}).get("chosen") or {}
    keys = ("machine", "nodes", "workers_per_node", "batch_per_worker", "accumulation_steps")
    if chosen and all(run.get(k) == chosen.get(k) for k in keys):
        return (chosen.get("iteration_s") or {}).get("estimate")
    return None


def step_in_run(report):
    """The step time the job's watches measured after the plan, on the configuration it ran (their median)."""
    run = report.get("chosen") or {}
    workers = (run.get("nodes") or 0) * (run.get("workers_per_node") or 1)
    steps = [t["iteration_s"] for t in report.get("timeline") or []
             if t.get("global_batch") == run.get("global_batch") and t.get("workers") == workers and t.get("iteration_s")]
    return median(steps) if steps else None


def decomposition(rows, with_config=False):
    """Where the plan's whole-job error comes from: the epochs to the target (the statistical model) against the
    step time (the time models). Planned: the chosen candidate's epochs (where the target is crossed) and the step
    time the plan priced the running configuration at; run: the epochs at the evaluation that saw the target and the
    watches' median step after the plan; then the time after the profile and the pilot, predicted against measured.
    Time per epoch is not compared: the prediction runs to the evaluation after the crossing and the pilot's epochs
    ran before it, so a per-epoch quotient of either moves with the epochs (it put the plan a tenth slow in rounds
    24-28 where its step time was not). with_config: also the configuration the plan chose."""
    print("\n**The plan's error taken apart**: the chosen configuration's epochs to the target, the step time, and the "
          "time after the profile and the pilot, as planned and as run\n")
    print(("| configuration " if with_config else "") +
          "| objective | seed | epochs planned / run | error | step planned / run | error | after the pilot planned "
          "/ run | error | re-planned |")
    print("|---" * (10 if with_config else 9) + "|")
    for r in sorted((r for r in rows if r["phase"] == "tune"), key=lambda r: (OBJECTIVES.index(r["objective"]), r["seed"])):
        rep = json.load(open(os.path.join(ROOT, r["report"])))
        chosen = (rep.get("plan") or {}).get("chosen") or {}
        if not chosen.get("epochs"):
            continue
        planned_epochs = chosen["epochs"]["estimate"]
        spent = (r["profile_s"] or 0) + (r["pilot_s"] or 0)
        planned_after, run_after = r["predicted"]["time_s"] - spent, r["total_s"] - spent
        planned_step, run_step = step_at_plan(rep), step_in_run(rep)
        step_text = (f"{planned_step * 1e3:.1f} / {run_step * 1e3:.1f} ms | {planned_step / run_step - 1:+.1%}"
                     if planned_step and run_step else "- | -")
        print((f"| {describe(chosen_config(r))} " if with_config else "") +
              f"| {r['objective']} | {r['seed']} | {planned_epochs:.2f} / {r['epochs']:.2f} | "
              f"{planned_epochs / r['epochs'] - 1:+.1%} | {step_text} | {planned_after:.0f} / {run_after:.0f} s | "
              f"{planned_after / run_after - 1:+.1%} | {'yes' if watch_moves(r) else 'no'} |")


def watch_moves(row):
    """The re-plans applied after the plan: the plan's own move after the pilot (a row since 9114c82) is the plan."""
    return [m for m in row.get("replans") or [] if m.get("applied") and not is_plan_move(m)]


def summary(rows, picks, points):
    """Medians and ranges of the regret and the prediction errors, over seeds 0-2 and over the later ones (the main
    case's held-out seeds; on a held-out case every seed is held out)."""
    tune_rows = [r for r in rows if r["phase"] == "tune"]
    for name, group in (("seeds 0-2", [r for r in tune_rows if r["seed"] <= 2]),
                        ("seeds 3 and up", [r for r in tune_rows if r["seed"] > 2])):
        if not group:
            continue
        regret = [r["total_s"] / points[picks[r["objective"]]]["time_s"] - 1 for r in group]
        errors = [abs(r["predicted"]["time_s"] / r["total_s"] - 1) for r in group if r.get("predicted")]
        cost_errors = [abs(r["predicted"]["cost"] / r["cost"] - 1) for r in group if r.get("predicted")]
        print(f"\n{name} ({len(group)} jobs): time regret {min(regret):+.1%} to {max(regret):+.1%} (median "
              f"{median(regret):+.1%}), within 5%: {sum(x <= 0.05 for x in regret)}; whole-job time predicted at the "
              f"plan, median |error| {median(errors):.1%} (largest {max(errors):.1%}), cost {median(cost_errors):.1%} "
              f"(largest {max(cost_errors):.1%})")


def prior_of(report):
    """The prior a job planned with, from its report's notes: (epochs, earlier jobs); the stated one (E_min 2, 0).
    A history's prior is in epochs at the reference batch ("the prior: "); the first version's in E_min."""
    for note in report.get("notes", []):
        if note.startswith("the prior: ") or note.startswith("E_min's prior: "):
            words = note.split()
            return float(words[2]), int(words[words.index("from") + 1])
    return 2.0, 0


def predictions(args):
    """The tune jobs' predictions alone (no grid needed): per job the prior it planned with, the whole job predicted
    at the plan against measured, the epochs planned against run, and the remaining time at half the run; then
    medians over the jobs that planned with the stated prior and over those with a history of earlier jobs."""
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    tune_rows = sorted((r for r in rows if r["phase"] == "tune" and r.get("predicted")),
                       key=lambda r: (r["objective"], r["seed"]))
    print(f"**Predictions** ({os.path.relpath(args.out, ROOT)}): {args.model} to {args.target:.0%}\n")
    print("| objective | seed | prior epochs (earlier jobs) | predicted at the plan | measured | error | epochs planned "
          "/ run | remaining at 50%: predicted / measured | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    groups = {"stated prior": [], "history": []}
    for r in tune_rows:
        rep = json.load(open(os.path.join(ROOT, r["report"])))
        prior, jobs = prior_of(rep)
        chosen = (rep.get("plan") or {}).get("chosen") or {}
        planned_epochs = (chosen.get("epochs") or {}).get("estimate")
        half = next((e for e in (r.get("remaining_error") or []) if e["fraction"] == 0.5), None)
        err = r["predicted"]["time_s"] / r["total_s"] - 1
        groups["history" if jobs else "stated prior"].append((err, half["error"] if half else None))
        half_text = f"{half['predicted_remaining_s']:.0f} / {half['measured_remaining_s']:.0f} s | {half['error']:+.1%}" if half else "- | -"
        print(f"| {r['objective']} | {r['seed']} | {prior:.3g} ({jobs}) | {r['predicted']['time_s']:.0f} s | "
              f"{r['total_s']:.0f} s | {err:+.1%} | "
              f"{planned_epochs if planned_epochs is None else f'{planned_epochs:.2f}'} / {r['epochs']:.2f} | "
              f"{half_text} |")
    for name, g in groups.items():
        if not g:
            continue
        plan = [abs(e) for e, _ in g]
        half = [abs(h) for _, h in g if h is not None]
        print(f"\n{name} ({len(g)} jobs): whole job at the plan median |error| {median(plan):.1%} (largest "
              f"{max(plan):.1%}, within 10%: {sum(x <= 0.10 for x in plan)}, beyond 25%: {sum(x > 0.25 for x in plan)})"
              + (f"; remaining at 50% median |error| {median(half):.1%} (largest {max(half):.1%}, within 10%: "
                 f"{sum(x <= 0.10 for x in half)})" if half else ""))
    decomposition(tune_rows, with_config=True)
    # The default (a) at the same seeds, where the file has it: the knee's whole job against (a)'s training.
    knee = {r["seed"]: r for r in tune_rows if r["objective"] == "knee"}
    default = {r["seed"]: r for r in rows if r["phase"] == "a" and r["seed"] in knee}
    if default:
        seeds = sorted(default)
        c_t, a_t = [knee[s]["total_s"] for s in seeds], [default[s]["time_s"] for s in seeds]
        c_c, a_c = [knee[s]["cost"] for s in seeds], [default[s]["cost"] for s in seeds]
        print(f"\n(c) knee against (a) at seeds {', '.join(map(str, seeds))}: (c) {', '.join(f'{t:.0f}' for t in c_t)} s, "
              f"(a) {', '.join(f'{t:.0f}' for t in a_t)} s; (a) / (c) time: ratio of medians {median(a_t) / median(c_t):.2f}x, "
              f"median of pair ratios {median([a / c for a, c in zip(a_t, c_t)]):.2f}x; cost: ratio of medians "
              f"{median(a_c) / median(c_c):.2f}x, median of pair ratios {median([a / c for a, c in zip(a_c, c_c)]):.2f}x "
              f"(above 1: (c) faster or cheaper)")


def epochs_by_batch(args):
    """Epochs to the target by global batch in the grid, relative to the reference batch (128), against what the
    steps-to-target model says: E(B) = E_min (1 + B / B_noise), at the median B_noise the tune jobs planned with."""
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    by_batch = {}
    for r in grid_rows(args, rows):
        if r["phase"] == "grid":
            by_batch.setdefault(r["nodes"] * r["batch"], []).append(r["epochs"])
    b_noise = median([(r.get("predicted") or {}).get("b_noise") for r in rows
                      if r["phase"] == "tune" and (r.get("predicted") or {}).get("b_noise")])
    at_reference = median(by_batch[128])
    print(f"Epochs to the target by global batch (grid, {os.path.relpath(args.out, ROOT)}); the model at B_noise {b_noise:.0f} "
          "(the tune jobs' median at the plan)\n")
    print("| global batch | epochs per run | median | measured, relative to 128 | model, relative to 128 |")
    print("|---|---|---|---|---|")
    for batch in sorted(by_batch):
        m = median(by_batch[batch])
        model = (1 + batch / b_noise) / (1 + 128 / b_noise)
        runs = ", ".join(f"{e:.2f}" for e in sorted(by_batch[batch]))
        print(f"| {batch} | {runs} | {m:.2f} | {m / at_reference:.2f} | {model:.2f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--front-knee", default=os.path.join(ROOT, "build", "bench", "tula_front_knee"))
    p.add_argument("--catalog", default=os.path.join(ROOT, "catalogs", "emulated.json"))
    p.add_argument("--one-node", action="store_true",
                   help="this machine alone (tune's local resources and backend), its own grid (ONE_NODE_GRID)")
    p.add_argument("--model", default="small_cnn")
    p.add_argument("--target", type=float, default=0.83)
    p.add_argument("--max-epochs", type=float, default=5)
    p.add_argument("--b-max-epochs", type=float, default=8)
    p.add_argument("--b-rates", default=",".join(map(str, B_RATES)),
                   help="the b-screen's rates (SGD's at batch 128, scaled linearly), comma-separated")
    p.add_argument("--phases", default="b-screen,grid,tune,a,b")
    p.add_argument("--work", default="/tmp/tula-oracle")
    p.add_argument("--out", default=os.path.join(HERE, "results", "decision_oracle.jsonl"),
                   help="the rows; the tune reports are kept in the folder of the same name without .jsonl")
    p.add_argument("--grid-seeds", default=",".join(map(str, GRID_SEEDS)), help="the grid's seeds to run")
    p.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="the seeds of the tune, a and b phases")
    p.add_argument("--objectives", default=",".join(OBJECTIVES), help="the tune phase's objectives")
    p.add_argument("--tune-extra", default="", help="more `tula tune` arguments for the tune phase, space-separated")
    p.add_argument("--a-extra", default="", help="more `tula tune` arguments for (a), space-separated")
    p.add_argument("--profile-cache", action="store_true",
                   help="tune jobs read the quick profile from --work's cache (filled before them) instead of "
                        "profiling anew")
    p.add_argument("--oracle-seeds", help="the grid seeds the tables' oracle uses (default: every seed in the rows)")
    p.add_argument("--grid-from", help="the oracle's grid rows from this file (an earlier round) instead of --out's; "
                   "several files, comma-separated, pool their rows")
    p.add_argument("--grid-add", default="",
                   help="configurations added to the grid, comma-separated machine:nodes:per-worker batch "
                   "(e.g. emu-one:2:64); the grid phase runs them and the tables' oracle weighs them")
    p.add_argument("--grid-only", default="",
                   help="the grid's configurations in place of GRID, comma-separated machine:nodes:per-worker batch "
                   "(a round that re-measures the candidates of an earlier front); --grid-add still adds to them")
    p.add_argument("--screen-from", help="take (b)'s rate from the b-screen rows of this file (an earlier round)")
    p.add_argument("--paired", default="",
                   help="the paired phase's oracle configurations, objective=machine:nodes:batch,... (each run "
                        "just before and after that objective's tune job, the same seed)")
    p.add_argument("--paired-table", action="store_true", help="print the paired phase's regret and run nothing")
    p.add_argument("--headline-knee", default="emu-one:1:128",
                   help="the headline phase's (d): the oracle's knee configuration, machine:nodes:per-worker batch")
    p.add_argument("--headline-methods", default="a,b,c,d", help="the headline phase's methods to run and print")
    p.add_argument("--headline-table", action="store_true",
                   help="print the headline phase's table ((a)-(d) run side by side) from --out and run nothing")
    p.add_argument("--table", action="store_true", help="print the tables from --out and run nothing")
    p.add_argument("--predictions", action="store_true",
                   help="print the tune jobs' prediction errors from --out (no grid needed) and run nothing")
    p.add_argument("--schedules", action="store_true",
                   help="print the schedule phase's table from --out (the schedule against its fixed ends) and run nothing")
    p.add_argument("--epochs-by-batch", action="store_true",
                   help="print the grid's epochs to the target by global batch against the model's, and run nothing")
    args = p.parse_args()
    args.catalog_json = None if args.one_node else json.load(open(args.catalog))
    args.grid, args.largest, args.default = ((ONE_NODE_GRID, ONE_NODE_LARGEST, ONE_NODE_DEFAULT) if args.one_node
                                             else (GRID, LARGEST, DEFAULT))
    def configs(text):
        return [(m, int(n), int(b)) for m, n, b in (x.split(":") for x in text.split(",") if x)]
    args.grid = (configs(args.grid_only) or list(args.grid)) + configs(args.grid_add)
    args.grid_seeds = tuple(int(x) for x in args.grid_seeds.split(","))
    args.seeds = tuple(int(x) for x in args.seeds.split(","))
    args.b_rates = tuple(float(x) for x in args.b_rates.split(","))
    args.objectives = tuple(args.objectives.split(","))
    args.tune_extra = args.tune_extra.split()
    args.oracle_seeds = tuple(int(x) for x in args.oracle_seeds.split(",")) if args.oracle_seeds else None
    args.grid_from = args.grid_from.split(",") if args.grid_from else []
    args.headline_methods = set(args.headline_methods.split(","))
    m, n, b = args.headline_knee.split(":")
    args.headline_knee = (m, int(n), int(b))
    args.paired = [(o, (m, int(n), int(b))) for o, c in (x.split("=") for x in args.paired.split(",") if x)
                   for m, n, b in [c.split(":")]]
    if args.paired_table:
        paired_table(args)
        return
    if args.headline_table:
        headline_table(args)
        return
    if args.table:
        table(args)
        return
    if args.epochs_by_batch:
        epochs_by_batch(args)
        return
    if args.schedules:
        schedules(args)
        return
    if args.predictions:
        predictions(args)
        return
    state = git_state()
    os.makedirs(args.work, exist_ok=True)
    done = {c for (c,) in rows_done(args.out, ("case",))}
    phases = set(args.phases.split(","))
    for case, phase, run in (list(cases(args)) + list(schedule_cases(args)) + list(paired_cases(args))
                             + list(headline_cases(args))):
        if phase not in phases or case in done:
            continue
        print(f"run {case} ...", flush=True)
        row = {"case": case, "phase": phase, "model": args.model, "target": args.target, **run(), **state}
        append_row(args.out, row)
        print(json.dumps({k: row.get(k) for k in ("case", "time_s", "total_s", "cost", "reached", "epochs")}), flush=True)


if __name__ == "__main__":
    main()
