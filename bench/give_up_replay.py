#!/usr/bin/env python3
"""Is giving up right? Replays the give-up verdict of `tula tune` (tune/watch.hpp judge_target) along recorded whole
training runs, for fixed targets and budgets, and counts the verdicts a continued run proves wrong.

For every recorded run below, every target in TARGETS and every budget in BUDGETS (epochs, the run cut there), the
replay (bench/give_up_replay.cpp) walks the run's evaluations as a tune watch would: the target is reached at the
first evaluation at or above it; before that, each rule may judge it out of reach. A give-up is wrong when the same
run reaches the target later within the budget, right when it never does. Both rules are replayed: "interval" (the
watch's rule now) and "point" (the rule it replaced).

The cases were fixed in this script before the replay was first run, and no rule was changed after seeing them.

  /usr/bin/python3 bench/give_up_replay.py --replay build-notorch/bench/tula_give_up_replay   # rows, then the table
  /usr/bin/python3 bench/give_up_replay.py --table                                           # the table only

Rows: bench/results/give_up/replay.jsonl (one per run, target and budget; rows already there are skipped).
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import subprocess

from bench_common import ROOT, append_row, git_state

RUNS = sorted(glob.glob(os.path.join(ROOT, "bench", "results", "gap_metrics", "*.jsonl.gz")))
TARGETS = [0.85, 0.87, 0.88, 0.89, 0.90, 0.91, 0.92]
BUDGETS = [20, 40, 80]
GIVE_UP_AFTER = 0.2
RESULTS = os.path.join(ROOT, "bench", "results", "give_up", "replay.jsonl")


def done_rows():
    if not os.path.exists(RESULTS):
        return {}
    rows = {}
    with open(RESULTS) as f:
        for line in f:
            r = json.loads(line)
            rows[(r["run"], r["target"], r["max_epochs"])] = r
    return rows


def replay(tool):
    done = done_rows()
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    state = git_state()
    for path in RUNS:
        run = os.path.basename(path)
        if all((run, t, float(b)) in done for t in TARGETS for b in BUDGETS):
            continue
        with gzip.open(path, "rb") as f:
            metrics = f.read()
        out = subprocess.run([tool, "--targets", ",".join(map(str, TARGETS)), "--max-epochs",
                              ",".join(map(str, BUDGETS)), "--give-up-after", str(GIVE_UP_AFTER)],
                             input=metrics, capture_output=True, check=True, timeout=600).stdout
        for line in out.decode().splitlines():
            row = json.loads(line)
            if (run, row["target"], row["max_epochs"]) in done:
                continue
            append_row(RESULTS, {"run": run, **row, **state})


def table():
    rows = list(done_rows().values())
    print(f"{len(rows)} cases: {len({r['run'] for r in rows})} recorded runs x {len(TARGETS)} targets x "
          f"{len(BUDGETS)} budgets; reached within the budget in {sum(r['reached_epoch'] is not None for r in rows)}")
    print()
    print("| rule | give-ups | right | wrong | cases never reached, given up | epochs saved per right give-up, median (range) |")
    print("| --- | --- | --- | --- | --- | --- |")
    unreached = [r for r in rows if r["reached_epoch"] is None]
    for rule in ("interval", "point"):
        key = f"{rule}_gave_up_epoch"
        gave_up = [r for r in rows if r[key] is not None]
        wrong = [r for r in gave_up if r["reached_epoch"] is not None]
        right = [r for r in gave_up if r["reached_epoch"] is None]
        saved = [r["max_epochs"] - r[key] for r in right]
        saved_text = (f"{statistics.median(saved):.1f} ({min(saved):.1f}-{max(saved):.1f})" if saved else "-")
        print(f"| {rule} | {len(gave_up)} | {len(right)} | {len(wrong)} | {len(right)} of {len(unreached)} | {saved_text} |")
    print()
    for rule in ("interval", "point"):
        key = f"{rule}_gave_up_epoch"
        wrong = [r for r in rows if r[key] is not None and r["reached_epoch"] is not None]
        if wrong:
            print(f"Wrong give-ups of the {rule} rule (run, target, budget: given up at epoch, reached at epoch):")
            for r in sorted(wrong, key=lambda r: (r["run"], r["target"], r["max_epochs"]))[:12]:
                print(f"  {r['run']}, {r['target']}, {r['max_epochs']:.0f}: {r[key]:.1f}, {r['reached_epoch']:.1f}")
            if len(wrong) > 12:
                print(f"  ... and {len(wrong) - 12} more")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replay", help="path of tula_give_up_replay: replay the cases not yet in the rows")
    p.add_argument("--table", action="store_true", help="print the table only")
    args = p.parse_args()
    if args.replay and not args.table:
        replay(os.path.abspath(args.replay))
    table()


if __name__ == "__main__":
    main()
