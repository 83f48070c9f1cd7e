#!/usr/bin/python3
"""The time models' step, from each quick profile a plan started from, against the steps measured at the oracle
grid's configurations on the emulated cluster (bench/results/decision_oracle_round2.jsonl, seeds 0 and 1: the
median over each run's watch readings, then over seeds). No pilot calibration: the profile as measured.

Profiles (gzipped) in bench/results/step_time/profiles/: round 2's nine tune jobs and the grid's two cached
profiles (development: the fit was changed after looking at these and at round 3's seed-0-2 jobs), round 3's tune
jobs (round3-tune-*-s0..s2: development; s3..s5: held out, added after the change and not looked at before).
Rows: one per (profile, configuration, --label), appended to --out; a rerun skips rows already there.

  bench/step_time_replay.py --label L [--replay build-notorch/bench/tula_step_time_replay]
  bench/step_time_replay.py --table
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import append_row, git_state, rows_done

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
GRID_ROWS = os.path.join(HERE, "results", "decision_oracle_round2.jsonl")
PROFILES = os.path.join(HERE, "results", "step_time", "profiles")


def measured_steps():
    """(machine, nodes, batch) -> median seconds per step over the grid's seeds."""
    by_config = {}
    for r in map(json.loads, open(GRID_ROWS)):
        if r["phase"] != "grid":
            continue
        rep = json.load(open(os.path.join(ROOT, r["report"])))
        steps = [t["iteration_s"] for t in rep["timeline"] if t.get("iteration_s")]
        by_config.setdefault((r["machine"], r["nodes"], r["batch"]), []).append(statistics.median(steps))
    return {c: statistics.median(v) for c, v in by_config.items()}


def group(profile):
    name = os.path.basename(profile)
    seed = int(name.split("-s")[-1].split(".")[0])
    return "held out" if name.startswith("round3-") and seed >= 3 else "development"


def replay(args):
    measured = measured_steps()
    state = git_state()
    done = set(rows_done(args.out, ("label", "profile", "machine", "nodes", "batch")))
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        for path in sorted(glob.glob(os.path.join(PROFILES, "*.json.gz"))):
            name = os.path.basename(path)[:-3]
            plain = os.path.join(tmp, name)
            with gzip.open(path) as src, open(plain, "wb") as dst:
                dst.write(src.read())
            for (machine, nodes, batch) in sorted(measured):
                if (args.label, name, machine, nodes, batch) in done:
                    continue
                lines.append(json.dumps({"profile": plain, "machine": machine, "nodes": nodes, "batch": batch}))
        out = subprocess.run([args.replay, args.catalog], input="\n".join(lines) + "\n", text=True,
                             capture_output=True, check=True).stdout
        for line in out.splitlines():
            p = json.loads(line)
            config = (p["machine"], p["nodes"], p["batch"])
            name = os.path.basename(p["profile"])
            append_row(args.out, {"label": args.label, "profile": name, "group": group(name), "machine": p["machine"],
                                  "nodes": p["nodes"], "batch": p["batch"], "predicted_s": p["iteration_s"],
                                  "measured_s": measured[config], "error": p["iteration_s"] / measured[config] - 1,
                                  "compute_s": p["compute_s"], "allreduce_s": p["allreduce_s"],
                                  "exposed_comm_s": p["exposed_comm_s"], "overlap_p": p["overlap_p"],
                                  "overlap_source": p["overlap_source"], **state})


def table(args):
    rows = [json.loads(l) for l in open(args.out) if l.strip()]
    labels = list(dict.fromkeys(r["label"] for r in rows))
    print("| fit | profiles | configurations | median \\|error\\|, one node | median \\|error\\|, several nodes "
          "| largest \\|error\\| | over 25% |")
    print("|---|---|---|---|---|---|---|")
    for label in labels:
        for name in ("development", "held out"):
            rs = [r for r in rows if r["label"] == label and r["group"] == name]
            if not rs:
                continue
            one = [abs(r["error"]) for r in rs if r["nodes"] == 1]
            many = [abs(r["error"]) for r in rs if r["nodes"] > 1]
            print(f"| {label} | {name}: {len({r['profile'] for r in rs})} | {len(rs)} | {statistics.median(one):.1%} | "
                  f"{statistics.median(many):.1%} | {max(abs(r['error']) for r in rs):.1%} | "
                  f"{sum(abs(r['error']) > 0.25 for r in rs)} |")
    print("\nOverlap p per profile and fit: " + "; ".join(
        f"{label}: " + ", ".join(f"{r['profile'].split('.')[0]} {r['overlap_p']:.3g} ({r['overlap_source']})"
                                 for r in rows if r["label"] == label and r["machine"] == "emu-half" and r["nodes"] == 2
                                 and r["batch"] == 32) for label in labels))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--replay", default=os.path.join(ROOT, "build-notorch", "bench", "tula_step_time_replay"))
    p.add_argument("--catalog", default=os.path.join(ROOT, "catalogs", "emulated.json"))
    p.add_argument("--out", default=os.path.join(HERE, "results", "step_time", "replay.jsonl"))
    p.add_argument("--label", help="names the fit the rows come from (e.g. the commit's change)")
    p.add_argument("--table", action="store_true")
    args = p.parse_args()
    if args.table:
        table(args)
    elif args.label:
        replay(args)
    else:
        p.error("--label or --table")


if __name__ == "__main__":
    main()
