#!/usr/bin/python3
"""What an overlapped allreduce costs a one-core node (round 24's grid): per
seed and per-worker batch, the worker's median compute time per step (forward
and backward, `compute_s`) on one emu-one node against two, where the second
node's gradients are averaged by an allreduce that the model counts as hidden
behind backward; beside it the allreduce's median busy time. On a node whose
one core the worker's thread fills, the allreduce's own work (the socket
copies, the sums) runs on that core too, so "hidden" is not free there.

The per-step rows are extracted once from the grid runs' metrics (kept in the
job folders while they exist) into a compact gzipped file in bench/results:

  bench/step_contention.py --extract /tmp/tula-oracle-round24   # writes --steps
  bench/step_contention.py                                     # the table, from --steps
"""
import argparse
import glob
import gzip
import json
import os
import re
import statistics

from bench_common import write_gzipped_lines

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = os.path.join(HERE, "results", "decision_oracle_round24", "emu_one_steps.jsonl.gz")
FIELDS = ("step", "time", "iter_s", "compute_s", "comm_busy_s", "comm_exposed_s")
SKIP = 20  # the first steps (allocator, caches) are left out of every median


def extract(work, out):
    """One line per step of every emu-one grid run under `work`: the case and FIELDS."""
    lines = []
    for d in sorted(glob.glob(os.path.join(work, "grid-emu-one-*-s*"))):
        m = re.fullmatch(r"grid-(emu-one)-(\d+)-(\d+)-s(\d+)", os.path.basename(d))
        metrics = os.path.join(d, "metrics.jsonl")
        if not m or not os.path.exists(metrics):
            continue
        case = {"machine": m[1], "nodes": int(m[2]), "batch_per_worker": int(m[3]), "seed": int(m[4])}
        for l in open(metrics):
            if '"type":"iter"' not in l:
                continue
            r = json.loads(l)
            # Whole microseconds (the seconds fields as *_us) and hundredths of a second of the clock.
            kept = {(k[:-2] + "_us" if k.endswith("_s") else k):
                    round(r[k] * 1e6) if k.endswith("_s") else round(r[k], 2) if k == "time" else r[k] for k in FIELDS}
            lines.append(json.dumps(dict(case, **kept), separators=(",", ":")))
    write_gzipped_lines(out, lines)
    print(f"{len(lines)} steps into {os.path.relpath(out)}")


def table(path):
    runs = {}
    for l in gzip.open(path, "rt"):
        r = json.loads(l)
        runs.setdefault((r["seed"], r["batch_per_worker"], r["nodes"]), []).append(r)
    med = lambda rows, k: 1e-6 * statistics.median(x[k[:-2] + "_us"] for x in rows[SKIP:])
    print("| seed | batch per worker | compute, 1 node | compute, 2 nodes | 2 / 1 | allreduce busy, 2 nodes "
          "| extra compute / busy | runs started (1 node, 2 nodes) |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for seed, b in sorted({(s, b) for s, b, _ in runs}):
        one, two = runs.get((seed, b, 1)), runs.get((seed, b, 2))
        if not one or not two:
            continue
        c1, c2, busy = med(one, "compute_s"), med(two, "compute_s"), med(two, "comm_busy_s")
        ratios.append(c2 / c1)
        when = lambda rows: f"{rows[0]['time'] % 86400 / 3600:05.2f} h"
        print(f"| {seed} | {b} | {1e3 * c1:.1f} ms | {1e3 * c2:.1f} ms | {c2 / c1:.3f} | {1e3 * busy:.1f} ms "
              f"| {(c2 - c1) / busy:.2f} | {when(one)}, {when(two)} UTC |")
    print(f"\ncompute on two nodes over one, same seed and per-worker batch: "
          f"{min(ratios):.3f} to {max(ratios):.3f} (median {statistics.median(ratios):.3f}) over {len(ratios)} pairs")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", default=STEPS, help="the extracted per-step rows")
    p.add_argument("--extract", metavar="WORK", help="extract the rows from this oracle work folder, then print")
    args = p.parse_args()
    if args.extract:
        extract(args.extract, args.steps)
    table(args.steps)


if __name__ == "__main__":
    main()
