#!/usr/bin/python3
"""The large-batch generalization gap, measured by the protocol in docs/ags.md
("Measuring the gap"): a model and epoch budget at which the reference batch
has converged, every batch given the same epochs, each method's rate tuned
per batch on a validation split carved from the training set, then seeds at
the chosen rate evaluated on the test set.

Phases (each appends one JSON line per finished run to --out and skips runs
already there, so any phase can be stopped and continued):

  tune         every method x batch x rate of its grid, one seed, trained on
               the training set less a --validation-size split, scored on it
  warmup       every method x batch at its tuned rate with the other warmup
               (none where the method has one, else 2 epochs), seed 0,
               validation split; final uses whichever scored better
  convergence  the reference batch at the rate tuned for it, at the budget and
               at twice the budget, on the test set
  final        every method x batch at its tuned rate, --seeds, full training
               set, test set
  screen       candidate changes to AGS (AGS_VARIANTS, --methods) at one --lr,
               seed 0, on the validation split
  ablation     the final AGS rule with each statistic removed, without bounds,
               with other bounds and without its warmup, at its tuned rate and
               chosen warmup, --seeds, test set (the rule itself: its finals)

  bench/generalization_gap.py --phase tune
  bench/generalization_gap.py --phase convergence
  bench/generalization_gap.py --phase final
  bench/generalization_gap.py --table
"""
import argparse
import gzip
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import append_row, free_port, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE_BATCH = 128
# Rates given at the reference batch; each method's rule scales them to B.
SGD_RATES = [0.025, 0.05, 0.1, 0.2]
LAMB_RATES = [0.0025, 0.005, 0.01, 0.02]
AGS_ADAM_RATES = [0.002, 0.004, 0.008, 0.016]
METHODS = {
    "sgd-linear": (["--optimizer", "sgd", "--lr-scaling", "linear", "--warmup-epochs", "2"], SGD_RATES),
    "sgd-sqrt-legw": (["--optimizer", "sgd", "--lr-scaling", "sqrt", "--legw", "--warmup-epochs", "0.1"], SGD_RATES),
    "lars": (["--optimizer", "lars", "--lr-scaling", "linear", "--lars-trust", "0.001", "--warmup-epochs", "2"],
             SGD_RATES),
    "lamb": (["--optimizer", "lamb", "--lr-scaling", "sqrt", "--warmup-epochs", "2", "--weight-decay", "0.01"],
             LAMB_RATES),
    "ags": (["--optimizer", "ags"], SGD_RATES),
    # AGS's factors on Adam's normalized step (docs/ags.md, "Direction"), with LAMB's decoupled weight decay.
    # Screened at 8192 because LAMB led the momentum form there with a lower training loss; it won that
    # screen on the validation split (89.30% against 88.33%), so it is tuned and run beside the momentum
    # form at every batch. Its step is Adam-sized, so its grid is too.
    "ags-adam": (["--optimizer", "ags", "--ags-direction", "adam", "--weight-decay", "0.01"], AGS_ADAM_RATES),
}
# AGS as first written (floor s_min = 1, 2-epoch warmup), before the screens below changed the rule: its rows
# are named "ags1" and "ags1-<variant>". "ags" and "ags-<variant>" are the current rule (--optimizer ags
# with its defaults: floor 0.25, no warmup).
AGS1 = ["--optimizer", "ags", "--ags-min", "1", "--warmup-epochs", "2"]
# Variants for screening changes to the rule (--phase screen) and for the ablation of the final rule
# (--phase ablation): the rule's flags plus these (a flag given here replaces the rule's own value).
AGS_VARIANTS = {
    "floor0.25": ["--ags-min", "0.25"],
    "floor1": ["--ags-min", "1"],
    "trust1": ["--ags-trust-exponent", "1"],
    "warmup2": ["--warmup-epochs", "2"],
    "warmup10": ["--warmup-epochs", "10"],
    "warmup0": ["--warmup-epochs", "0"],
    "per-layer": ["--ags-per-layer"],
    "floor0.25-warmup0": ["--ags-min", "0.25", "--warmup-epochs", "0"],
    "no-noise": ["--ags-ablate", "noise"],
    "no-trust": ["--ags-ablate", "trust"],
    "no-trend": ["--ags-ablate", "trend"],
    "unbounded": ["--ags-unbounded"],
    "bounds-0.5-8": ["--ags-min", "0.5", "--ags-max", "8"],
}
# At the reference batch every rule is plain SGD: one method, "reference".
REFERENCE = (["--optimizer", "sgd", "--warmup-epochs", "2"], SGD_RATES)
MICRO_BATCH = 1024  # larger per-worker batches run as accumulated micro-batches (no batch norm in lenet5)
# A run whose network has collapsed to a constant prediction (held-out accuracy at chance, training loss at
# ln 10) for this many epochs in a row is stopped and scored as diverged: such a network does not recover
# (every collapsed run of the 20-epoch grid stayed at chance for all its remaining epochs).
COLLAPSED_EPOCHS = 5
CHANCE_ACCURACY = 0.12
COLLAPSED_LOSS = 2.29
# A grid whose best rate lies at its edge is extended by a factor of 2 past that edge, at most this often
# (4 in the protocol as first written; 6 since standard linear scaling at 8192 still had its best rate at the
# edge after 4: stopping there could score a baseline below its best rate).
MAX_EXTENSIONS = 6


RULES = {**METHODS, "ags1": (AGS1, SGD_RATES)}


def split_variant(method):
    """(rule, variant) for an AGS variant's name, the longest rule it starts with ("ags-adam-trust1" is
    ags-adam with trust1); (method, None) for anything else."""
    for rule in sorted((r for r in RULES if r.startswith("ags")), key=len, reverse=True):
        if method.startswith(rule + "-") and method[len(rule) + 1:] in AGS_VARIANTS:
            return rule, method[len(rule) + 1:]
    return method, None


def method_spec(method):
    if method == "reference":
        return REFERENCE
    if method in RULES:
        return RULES[method]
    rule, variant = split_variant(method)
    if variant is None:
        raise KeyError(f"unknown method {method!r}")
    options, rates = RULES[rule]
    return replace_flags(options, AGS_VARIANTS[variant]), rates


def replace_flags(options, flags):
    """`options` with each flag that `flags` names taken out (with its value, where it has one), then `flags`."""
    names = {f for f in flags if f.startswith("--")}
    kept, i = [], 0
    while i < len(options):
        if options[i] in names:
            has_value = i + 1 < len(options) and not options[i + 1].startswith("--")
            i += 2 if has_value else 1
        else:
            kept.append(options[i])
            i += 1
    return kept + flags


def default_warmup(method):
    """The warmup, in epochs, that the method's options give (0 without one)."""
    options, _ = method_spec(method)
    return float(options[options.index("--warmup-epochs") + 1]) if "--warmup-epochs" in options else 0.0


def other_warmup(method):
    """The warmup tried against the method's own at its tuned rate: none where it has one, else 2 epochs."""
    return 0.0 if default_warmup(method) > 0 else 2.0


def train(args, method, batch, lr, seed, epochs, validation, warmup=None):
    options = method_spec(method)[0]
    if warmup is not None:
        options = replace_flags(options, ["--warmup-epochs", f"{warmup:g}"])
    per_worker, accumulation = batch // args.workers, 1
    while per_worker // accumulation > MICRO_BATCH and per_worker % (2 * accumulation) == 0:
        accumulation *= 2
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [args.tula, "train", "--nproc", str(args.workers), "--master-port", str(free_port()),
               "--model", args.model, "--dataset", "fashion-mnist", "--epochs", str(epochs),
               "--batch-size", str(per_worker // accumulation), "--accumulation-steps", str(accumulation),
               "--lr", str(lr), "--momentum", "0.9", "--schedule", "cosine",
               *([] if "--weight-decay" in options else ["--weight-decay", "5e-4"]),
               "--reference-batch", str(REFERENCE_BATCH), "--seed", str(seed), "--progress", "none",
               "--tensor-stats-every", "0", "--metrics", metrics] + options
        if validation:
            cmd += ["--validation-size", str(args.validation_size), "--validation-seed", "0"]
        start = time.time()
        proc, collapsed = run_until_collapse(cmd, metrics)
        rows = read_rows(metrics)
        if args.keep_metrics and method.startswith("ags"):
            keep_metrics(args, metrics, method, batch, lr, seed, epochs, validation, warmup)
    epochs_done = [r for r in rows if r.get("type") == "epoch"]
    begin = next((r for r in rows if r.get("type") == "start"), {})
    return {"model": args.model, "method": method, "global_batch": batch, "lr": lr, "seed": seed, "epochs": epochs,
            "evaluated_on": begin.get("evaluated_on"), "train_samples": begin.get("train_samples"),
            "steps": epochs_done[-1]["step"] if epochs_done else None, "workers": args.workers,
            "accumulation_steps": accumulation, "exit_code": proc.returncode, "collapsed": collapsed,
            "error": ("stopped: collapsed to chance" if collapsed else
                      " | ".join(proc.stderr.strip().splitlines()[-3:]) if proc.returncode else None),
            "accuracy": 0.0 if collapsed else
                        epochs_done[-1]["test_accuracy"] if epochs_done and proc.returncode == 0 else None,
            "accuracy_by_epoch": [r.get("test_accuracy") for r in epochs_done],
            "final_train_loss": epochs_done[-1]["train_loss"] if epochs_done else None,
            "wall_s": time.time() - start, "command": " ".join(cmd)}


def keep_metrics(args, metrics, method, batch, lr, seed, epochs, validation, warmup):
    """AGS runs keep their metrics stream (every step's loss and factor distribution), gzipped, for the
    analysis of what limits the rule. The name holds everything a row's key holds (the phase, and the warmup
    where it replaces the method's own), so no run's stream replaces another's."""
    os.makedirs(args.keep_metrics, exist_ok=True)
    name = (f"{args.model}-{args.phase}-{method}{'' if warmup is None else f'-warmup{warmup:g}'}-B{batch}-lr{lr}"
            f"-s{seed}-e{epochs}-{'validation' if validation else 'test'}.jsonl.gz")
    tmp = os.path.join(args.keep_metrics, "." + name)
    with open(metrics, "rb") as src, gzip.open(tmp, "wb") as dst:
        dst.write(src.read())
    os.replace(tmp, os.path.join(args.keep_metrics, name))


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


def has_collapsed(rows):
    epochs = [r for r in rows if r.get("type") == "epoch"][-COLLAPSED_EPOCHS:]
    return len(epochs) == COLLAPSED_EPOCHS and all(
        r.get("test_accuracy", 1.0) < CHANCE_ACCURACY and r.get("train_loss", 0.0) > COLLAPSED_LOSS for r in epochs)


def run_until_collapse(cmd, metrics):
    """Runs the training; stops it (its whole process group) once its network has collapsed to chance."""
    stderr = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, text=True, start_new_session=True)
    collapsed = False
    while True:
        try:
            proc.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            pass
        if has_collapsed(read_rows(metrics)):
            collapsed = True
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            break
    stderr.seek(0)
    proc.stderr = stderr.read()
    return proc, collapsed


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()] if os.path.exists(path) else []


def tuning_cell(rows, model, method, batch, epochs):
    # A screen run of a method is the run its tuning would make at that rate (seed 0, the validation split,
    # the method's own flags and warmup), so it counts as one.
    return [r for r in rows if r["phase"] in ("tune", "screen") and r["model"] == model and r["method"] == method
            and r["global_batch"] == batch and r["epochs"] == epochs]


def score(row):
    return row["accuracy"] or 0.0


def tuning_grid(rows, model, method, batch, epochs):
    """The rates this cell's tuning runs: the method's grid, extended by a factor of 2 past whichever edge
    holds the best score (downward when every run diverged), until the best lies inside the grid."""
    grid = sorted(method_spec(method)[1])
    cell = {r["lr"]: score(r) for r in tuning_cell(rows, model, method, batch, epochs)}
    for _ in range(MAX_EXTENSIONS):
        if any(lr not in cell for lr in grid):
            break
        best = max(cell[lr] for lr in grid)
        if best == 0.0 or cell[grid[0]] == best:
            grid.insert(0, grid[0] / 2)
        elif cell[grid[-1]] == best:
            grid.append(grid[-1] * 2)
        else:
            break
    return grid


def tuned_rate(rows, model, method, batch, epochs):
    """The grid rate with the best validation accuracy (a diverged run scores 0); None until the grid,
    extended as far as it needs, is done."""
    cell = {r["lr"]: score(r) for r in tuning_cell(rows, model, method, batch, epochs)}
    grid = tuning_grid(rows, model, method, batch, epochs)
    if any(lr not in cell for lr in grid):
        return None
    return max(grid, key=lambda lr: cell[lr])


# The ablation is of the final rule at 8192: the AGS form ahead there on the validation split (the Adam form:
# 89.30% against 88.33%), at its tuned rate, with the warmup its check chose (2 epochs), that is, the rule
# exactly as its finals ran it. Its own row in the ablation is the finals' run at the same seed (the same
# command; runs are deterministic), so only the variants run here. A variant that names a warmup sets it;
# every other keeps the rule's.
ABLATION_RULE = "ags-adam"
ABLATION = [f"{ABLATION_RULE}-{v}" for v in
            ("no-noise", "no-trust", "no-trend", "unbounded", "bounds-0.5-8", "floor1", "trust1", "warmup0")]


def variant_sets_warmup(method):
    variant = split_variant(method)[1]
    return variant is not None and "--warmup-epochs" in AGS_VARIANTS[variant]


def warmup_check(rows, model, method, batch, epochs, lr):
    """The --phase warmup row of this cell at rate `lr` (the other warmup), or None until it is run."""
    return next((r for r in rows if r["phase"] == "warmup" and r["model"] == model and r["method"] == method
                 and r["global_batch"] == batch and r["epochs"] == epochs and r["lr"] == lr), None)


def warmup_pair(rows, model, method, batch, epochs, lr):
    """(the tuning row with the method's own warmup, the warmup-check row) at `lr`; either may be None."""
    own = next((r for r in tuning_cell(rows, model, method, batch, epochs) if r["lr"] == lr), None)
    return own, warmup_check(rows, model, method, batch, epochs, lr)


def tuned_warmup(rows, model, method, batch, epochs, lr):
    """None (the method's own warmup) or the other warmup, whichever scored better at the tuned rate on the
    validation split (a tie keeps the method's own); "missing" until the --phase warmup run is there."""
    own, other = warmup_pair(rows, model, method, batch, epochs, lr)
    if own is None or other is None:
        return "missing"
    return other["warmup_epochs"] if score(other) > score(own) else None


def cells(args):
    batches = [int(b) for b in args.batches.split(",")]
    named = args.methods.split(",") if args.methods else None
    for batch in batches:
        if batch == REFERENCE_BATCH:
            methods = ["reference"]
        elif args.phase == "ablation":
            methods = named or ABLATION
        elif args.phase == "screen":
            methods = named or ["ags"]
        else:
            methods = [m for m in METHODS if not named or m in named]
        for method in methods:
            yield method, batch


def run_phase(args):
    for method, batch in cells(args):
        if args.phase == "tune":
            tune_cell(args, method, batch)
            continue
        if args.phase == "warmup":
            # The method's own warmup against the other one (none, or 2 epochs), at its tuned rate.
            lr = tuned_rate(load(args.out), args.model, method, batch, args.epochs)
            if lr is None:
                print(f"skip {method} at {batch}: its rate is not tuned yet", file=sys.stderr)
                continue
            run_once(args, method, batch, lr, 0, args.epochs, True, other_warmup(method))
            continue
        if args.phase == "screen":
            # A candidate change to AGS at the given rates (AGS's tuned one, or a grid where the change
            # alters the step's scale), one seed, on the validation split.
            if args.lr is None:
                sys.exit("--phase screen needs --lr")
            for lr in args.lr:
                run_once(args, method, batch, lr, 0, args.epochs, True)
            continue
        if args.phase == "convergence":
            if method != "reference":
                continue
            lr = tuned_rate(load(args.out), args.model, method, batch, args.epochs)
            if lr is None:
                sys.exit("convergence needs the reference's tuning runs first (--phase tune)")
            plan = [(lr, 0, args.epochs, False, None), (lr, 0, 2 * args.epochs, False, None)]
        else:
            # final: each method at its own tuned rate; ablation: every variant at AGS's tuned rate.
            tuned_for = ABLATION_RULE if args.phase == "ablation" and method != "reference" else method
            lr = tuned_rate(load(args.out), args.model, tuned_for, batch, args.epochs)
            if lr is None:
                print(f"skip {method} at {batch}: the tuning of {tuned_for} is not complete", file=sys.stderr)
                continue
            warmup = None
            if method != "reference" and not variant_sets_warmup(method):
                warmup = tuned_warmup(load(args.out), args.model, tuned_for, batch, args.epochs, lr)
                if warmup == "missing":
                    print(f"skip {method} at {batch}: run --phase warmup for {tuned_for} first", file=sys.stderr)
                    continue
            plan = [(lr, int(s), args.epochs, False, warmup) for s in args.seeds.split(",")]
        for lr, seed, epochs, validation, warmup in plan:
            run_once(args, method, batch, lr, seed, epochs, validation, warmup)


def tune_cell(args, method, batch):
    """Runs the cell's grid, extending it while its best rate sits at an edge."""
    while True:
        grid = tuning_grid(load(args.out), args.model, method, batch, args.epochs)
        done = {r["lr"] for r in tuning_cell(load(args.out), args.model, method, batch, args.epochs)}
        todo = [lr for lr in grid if lr not in done]
        if not todo:
            return
        for lr in todo:
            run_once(args, method, batch, lr, 0, args.epochs, True)


def run_once(args, method, batch, lr, seed, epochs, validation, warmup=None):
    """One run unless its row is in --out already. `warmup` (epochs) replaces the method's own warmup; rows
    run with the method's own have no warmup_epochs field in their key (the first rows had none)."""
    key = {"phase": args.phase, "model": args.model, "method": method, "global_batch": batch, "lr": lr,
           "seed": seed, "epochs": epochs}
    if warmup is not None:
        key["warmup_epochs"] = warmup
    if any(all(r.get(k) == v for k, v in key.items()) for r in load(args.out)):
        return
    row = dict(key, **train(args, method, batch, lr, seed, epochs, validation, warmup))
    row.update(git_state())  # not part of the key: a row run at another commit still counts as done
    append_row(args.out, row)
    print(json.dumps({k: row[k] for k in ("phase", "method", "global_batch", "lr", "seed", "epochs",
                                           "accuracy", "steps", "wall_s")}), file=sys.stderr, flush=True)


def print_table(args):
    rows = [r for r in load(args.out) if r["model"] == args.model]
    print(f"\n{args.model}, {args.epochs} epochs per batch\n")
    conv = sorted((r for r in rows if r["phase"] == "convergence"), key=lambda r: r["epochs"])
    for r in conv:
        print(f"reference at B = 128, lr {r['lr']}: {r['epochs']} epochs ({r['steps']} steps): "
              f"test {100 * r['accuracy']:.2f}%")
    batches = sorted({r["global_batch"] for r in rows})
    print("\n| method | " + " | ".join(f"B = {b}" for b in batches) + " |")
    print("|---|" + "---|" * len(batches))
    for method in ["reference"] + list(METHODS):
        line = []
        for b in batches:
            final = final_runs(rows, args.model, method, b, args.epochs)
            acc = [100 * r["accuracy"] for r in final if r["accuracy"] is not None]
            lr = tuned_rate(rows, args.model, method, b, args.epochs)
            steps = max((r["steps"] for r in final if r["steps"]), default=None)
            # A collapsed seed scores 0 in the mean (the protocol's score); the mean of the others beside it.
            lost = sum(1 for r in final if r.get("collapsed"))
            finite = [100 * r["accuracy"] for r in final if r["accuracy"] and not r.get("collapsed")]
            rest = (f"; {lost} collapsed, the other {len(finite)}: {statistics.mean(finite):.2f}"
                    if lost and finite else "")
            if not final:
                line.append("-" if lr is None else f"lr {lr}: not run")
            elif len(acc) >= 2:
                line.append(f"{statistics.mean(acc):.2f} +- {statistics.stdev(acc):.2f} ({len(acc)}; lr {lr}; "
                            f"{steps} steps{rest})")
            else:
                line.append(f"{acc[0] if acc else float('nan'):.2f} ({len(acc)} of {len(final)}; lr {lr}; "
                            f"{steps} steps)")
        print(f"| {method} | " + " | ".join(line) + " |")
    print_targets(rows, args)
    print_tuning(rows, args)
    print_runs(rows, args, "screen", "AGS variants screened at one rate, seed 0, validation split")
    print_ablation(rows, args)


AGS_FORMS = ("ags", "ags-adam")
TARGET_POINTS = {1024: 0.5, 4096: 0.5, 8192: 1.5}  # AGS's largest distance below the reference (the issue)
# Compared with AGS at every batch. The targets ask AGS to lead the first three at 4096 and 8192 by more
# than the spread; the rest of the comparisons are context.
COMPARED = ("sgd-linear", "lamb", "lars", "sgd-sqrt-legw")


def chosen_validation_score(rows, model, method, batch, epochs):
    """The validation accuracy at the tuned rate with the chosen warmup (the better of the two warmups, which
    is the one tuned_warmup chooses); None until both are known."""
    lr = tuned_rate(rows, model, method, batch, epochs)
    own, other = warmup_pair(rows, model, method, batch, epochs, lr) if lr is not None else (None, None)
    return None if own is None or other is None else max(score(own), score(other))


def final_runs(rows, model, method, batch, epochs):
    return [r for r in rows if r["phase"] == "final" and r["model"] == model and r["method"] == method
            and r["global_batch"] == batch and r["epochs"] == epochs]


def final_accuracies(rows, model, method, batch, epochs):
    return [100 * (r["accuracy"] or 0.0) for r in final_runs(rows, model, method, batch, epochs)]


def print_targets(rows, args):
    """The issue's targets, read as docs/ags.md fixes them: AGS is the form ahead on the validation split at
    each batch; distances are differences of test-set means; "ahead by more than the spread" means the seed
    ranges do not overlap."""
    reference = final_accuracies(rows, args.model, "reference", REFERENCE_BATCH, args.epochs)
    print("\nTargets (test set, means over the seeds; ranges are [lowest, highest] seed)\n")
    for batch in sorted(TARGET_POINTS):
        forms = {m: chosen_validation_score(rows, args.model, m, batch, args.epochs) for m in AGS_FORMS}
        if any(v is None for v in forms.values()):
            print(f"B = {batch}: the AGS forms' tuning or warmup checks are not complete")
            continue
        ags = max(AGS_FORMS, key=lambda m: forms[m])
        mine = final_accuracies(rows, args.model, ags, batch, args.epochs)
        if len(mine) < 2 or len(reference) < 2:
            print(f"B = {batch}: AGS is {ags} (validation {pct(forms[ags])}); "
                  f"finals: {len(mine)} of its seeds, {len(reference)} of the reference's")
            continue
        distance = statistics.mean(reference) - statistics.mean(mine)
        met = "met" if distance <= TARGET_POINTS[batch] else "not met"
        print(f"B = {batch}: AGS = {ags}, {statistics.mean(mine):.2f} [{min(mine):.2f}, {max(mine):.2f}] against the "
              f"reference's {statistics.mean(reference):.2f} [{min(reference):.2f}, {max(reference):.2f}]: "
              f"reference - AGS = {distance:+.2f} points (target <= {TARGET_POINTS[batch]}: {met})")
        for other in COMPARED:
            theirs = final_accuracies(rows, args.model, other, batch, args.epochs)
            if len(theirs) < 2:
                print(f"    against {other}: {len(theirs)} of its seeds")
                continue
            lead = statistics.mean(mine) - statistics.mean(theirs)
            apart = min(mine) > max(theirs)
            print(f"    against {other} {statistics.mean(theirs):.2f} [{min(theirs):.2f}, {max(theirs):.2f}]: "
                  f"{lead:+.2f} points; " + ("ahead by more than the spread" if apart else "ranges overlap"))


def train_loss(row):
    return "-" if row["final_train_loss"] is None else f"{row['final_train_loss']:.3f}"


def pct(accuracy):
    return "diverged" if not accuracy else f"{100 * accuracy:.2f}"


def print_tuning(rows, args):
    """Each cell's grid: validation accuracy per rate (given at batch 128), the chosen rate in bold."""
    print(f"\nTuning (validation split, seed 0; rates given at B = {REFERENCE_BATCH}, scaled by each rule)\n")
    print("| method | B | steps | validation accuracy per rate | at that rate with the other warmup |")
    print("|---|---|---|---|---|")
    cells_run = sorted({(r["method"], r["global_batch"]) for r in rows if r["epochs"] == args.epochs
                        and (r["phase"] == "tune" or r["phase"] == "screen" and r["method"] in METHODS)},
                       key=lambda c: (c[1], c[0]))
    for method, batch in cells_run:
        cell = {r["lr"]: r for r in tuning_cell(rows, args.model, method, batch, args.epochs)}
        chosen = tuned_rate(rows, args.model, method, batch, args.epochs)
        steps = max(((r["steps"] or 0) for r in cell.values() if not r.get("collapsed") and r["exit_code"] == 0),
                    default=None)
        grid = ", ".join((f"**{lr:g}: {pct(cell[lr]['accuracy'])}**" if lr == chosen else
                          f"{lr:g}: {pct(cell[lr]['accuracy'])}") for lr in sorted(cell))
        other = warmup_check(rows, args.model, method, batch, args.epochs, chosen)
        warmup = "-" if method == "reference" or other is None else (
            f"{other['warmup_epochs']:g} epochs: {pct(other['accuracy'])}"
            f"{' (chosen)' if tuned_warmup(rows, args.model, method, batch, args.epochs, chosen) is not None else ''}")
        print(f"| {method} | {batch} | {steps or '-'} | {grid}{'' if chosen else ' (grid not complete)'} "
              f"| {warmup} |")


def print_runs(rows, args, phase, title):
    runs = [r for r in rows if r["phase"] == phase and r["epochs"] == args.epochs]
    if not runs:
        return
    print(f"\n{title}\n")
    print("| variant | B | lr | seed | accuracy | final train loss |")
    print("|---|---|---|---|---|---|")
    for r in sorted(runs, key=lambda r: (r["global_batch"], r["method"], r["seed"])):
        print(f"| {r['method']} | {r['global_batch']} | {r['lr']:g} | {r['seed']} | {pct(r['accuracy'])} "
              f"| {train_loss(r)} |")


def print_ablation(rows, args):
    """Each variant of the final rule against the rule itself (its finals at the same seeds), test set."""
    runs = [r for r in rows if r["phase"] == "ablation" and r["model"] == args.model and r["epochs"] == args.epochs]
    if not runs:
        return
    print(f"\nAblation of the final AGS rule ({ABLATION_RULE} with its chosen warmup), test set\n")
    print("| variant | B | lr | warmup (epochs) | accuracy per seed | mean | variant - rule, per seed (mean) "
          "| final training loss |")
    print("|---|---|---|---|---|---|---|---|")
    for batch in sorted({r["global_batch"] for r in runs}):
        rule = {r["seed"]: r for r in final_runs(rows, args.model, ABLATION_RULE, batch, args.epochs)}
        cell = [r for r in runs if r["global_batch"] == batch]
        seeds = sorted({r["seed"] for r in cell})
        lines = [(ABLATION_RULE + " (its finals)", [rule[s] for s in seeds if s in rule], False)]
        lines += [(m, sorted((r for r in cell if r["method"] == m), key=lambda r: r["seed"]), True)
                  for m in ABLATION if any(r["method"] == m for r in cell)]
        for name, chosen, is_variant in lines:
            if not chosen:
                print(f"| {name} | {batch} | - | - | not run | - | - | - |")
                continue
            acc = {r["seed"]: 100 * score(r) for r in chosen}
            delta = "-"
            if is_variant and all(s in rule for s in acc):
                per_seed = [acc[s] - 100 * score(rule[s]) for s in acc]
                delta = " / ".join(f"{d:+.2f}" for d in per_seed) + f" ({statistics.mean(per_seed):+.2f})"
            warmup = chosen[0].get("warmup_epochs", default_warmup(chosen[0]["method"]))
            losses = ", ".join(train_loss(r) for r in chosen)
            print(f"| {name} | {batch} | {chosen[0]['lr']:g} | {warmup:g} | "
                  + ", ".join(f"{s}: {pct(r['accuracy'])}" for s, r in zip(acc, chosen))
                  + f" | {statistics.mean(acc.values()):.2f} | {delta} | {losses} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tula", default=os.path.join(HERE, "..", "build", "src", "tula"))
    p.add_argument("--model", default="lenet5")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batches", default="128,1024,4096,8192")
    p.add_argument("--methods", default=None,
                   help="comma list (default: all of the phase's; screen and ablation also take AGS_VARIANTS)")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--validation-size", type=int, default=10000)
    p.add_argument("--phase", choices=["tune", "warmup", "convergence", "final", "screen", "ablation"],
                   default="tune")
    p.add_argument("--lr", type=lambda text: [float(x) for x in text.split(",")], default=None,
                   help="--phase screen: the rate, or a comma list of rates, given at batch 128")
    p.add_argument("--out", default=os.path.join(HERE, "results", "generalization_gap.jsonl"))
    p.add_argument("--keep-metrics", default=os.path.join(HERE, "results", "gap_metrics"),
                   help="folder for the gzipped metrics of AGS runs ('' keeps none)")
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    if args.table:
        print_table(args)
    else:
        run_phase(args)


if __name__ == "__main__":
    main()
