#!/usr/bin/python3
"""A two-worker job's start: the wall time of `tula train --nproc 2` on
LeNet-5 for one step, for two builds run alternately (A then B, B then A,
...). What it shows: whether a worker that reaches rank 0's store before it
listens loses c10d's one-second retry (the builds before 6cc7e4b) or waits
for the listener (after). Rows are appended to --out and rows already there
are skipped, so an interrupted run resumes.

  bench/worker_start.py --a BEFORE/build/src/tula --a-label 14fb272 \\
      --b build/src/tula --b-label 6cc7e4b --pairs 10 --out bench/results/worker_start.jsonl
  bench/worker_start.py --out bench/results/worker_start.jsonl --table
"""
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from bench_common import ab_main, append_row, git_state, read_rows, rows_done

def one_start(binary):
    """Seconds from starting `tula train --nproc 2` to its exit after one step."""
    work = tempfile.mkdtemp(prefix="tula-worker-start-")
    try:
        start = time.time()
        r = subprocess.run([binary, "train", "--model", "lenet5", "--dataset", "fashion-mnist", "--nproc", "2",
                            "--batch-size", "16", "--epochs", "1", "--max-steps", "1", "--no-eval", "--progress",
                            "none", "--tensor-stats-every", "0", "--metrics", os.path.join(work, "m.jsonl")],
                           capture_output=True, text=True, timeout=300)
        wall = time.time() - start
        if r.returncode != 0:
            raise RuntimeError(f"{binary} train failed ({r.returncode}): {r.stdout[-2000:]}{r.stderr[-2000:]}")
        return wall
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args):
    done = rows_done(args.out, ("pair", "arm"))
    arms = {"a": (args.a, args.a_label), "b": (args.b, args.b_label)}
    for pair in range(1, args.pairs + 1):
        for arm in (["a", "b"] if pair % 2 else ["b", "a"]):
            if (pair, arm) in done:
                continue
            binary, label = arms[arm]
            wall = one_start(binary)
            row = {"pair": pair, "arm": arm, "build": label, "wall_s": wall,
                   "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state(short=True)}
            append_row(args.out, row)
            print(json.dumps(row), flush=True)


def table(args):
    rows = read_rows(args.out)
    by = {(r["pair"], r["arm"]): r for r in rows}
    pairs = sorted({p for p, _ in by if (p, "a") in by and (p, "b") in by})
    a = [by[(p, "a")]["wall_s"] for p in pairs]
    b = [by[(p, "b")]["wall_s"] for p in pairs]
    ratios = [y / x for x, y in zip(a, b)]
    print("| arm | build | wall (s), by pair | median | range |")
    print("|---|---|---|---|---|")
    for arm, values in (("A", a), ("B", b)):
        print(f"| {arm} | {by[(pairs[0], arm.lower())]['build']} | {', '.join(f'{v:.2f}' for v in values)} | "
              f"{statistics.median(values):.2f} | {min(values):.2f}-{max(values):.2f} |")
    print(f"\n{len(pairs)} pairs: B / A median of pair ratios {statistics.median(ratios):.3f}, "
          f"ratio of medians {statistics.median(b) / statistics.median(a):.3f}")


if __name__ == "__main__":
    ab_main(__doc__, measure, table, pairs=10)
