#!/usr/bin/python3
"""The allreduce on the cores the backward runs on (docs/notebook/round-14.md, "The oracle, round 14"). On two one-core
emu-one nodes the workers record each step's backward (compute_s), the allreduce's busy time (comm_busy_s), what of it
the step waited for (comm_exposed_s) and the share counted hidden (comm_hidden_fraction); one worker alone on one
emu-one node at 128 a worker records its backward with no allreduce at all. Set side by side within one pair's hour
(round 13's and later rounds' paired rows: the oracle's configuration before and after each tune job), the backward's
growth per step on two nodes against the allreduce's busy time says whether the hidden share was hidden.

  bench/allreduce_on_cores.py jobs ROWS.jsonl ...   appends one row per launch of the rows' jobs (their metrics
                                                    files, the --out of each row's command) to
                                                    bench/results/allreduce_on_cores.jsonl, skipping those there;
                                                    prints the tables from the rows
  bench/allreduce_on_cores.py ab [--repeats 5]      the same question asked directly, side by side: on the two emu-one
                                                    nodes, in turn, (a) one data-parallel job over both at 64 a worker,
                                                    (b) the same training in each node alone (no allreduce), (c) one
                                                    node at 128; `tula train` of small_cnn on Fashion-MNIST, AGS,
                                                    --steps steps without evaluation; rows to
                                                    bench/results/allreduce_on_cores_ab.jsonl (appended; --repeats
                                                    more rounds each run); prints the table from the rows
  bench/allreduce_on_cores.py ab --table            the table alone

The jobs' second table sets the knee's plan against the pair: the step its plan predicted for one emu-one node at 128
(the report's front), against the pair's measured steps there.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

from bench_common import ROOT, append_row, command_option, free_port, git_state, launches_of, rows_done
from emulated_cluster import cluster_state, first_nodes_by_type, in_node

OUT = os.path.join(ROOT, "bench", "results", "allreduce_on_cores.jsonl")
AB_OUT = os.path.join(ROOT, "bench", "results", "allreduce_on_cores_ab.jsonl")


def collect(paths):
    done = rows_done(OUT, ["source", "case", "launch"])
    for path in paths:
        source = os.path.basename(path)
        for row in map(json.loads, open(path)):
            if row["phase"] not in ("paired", "tune"):
                continue
            metrics = os.path.join(command_option(row["command"], "--out"), "metrics.jsonl")
            if not os.path.exists(metrics):
                continue
            report = json.load(open(os.path.join(ROOT, row["report"])))
            front = (report.get("plan") or {}).get("front") or []
            one_node = next((p["iteration_s"] for p in front if p["machine"] == "emu-one" and p["nodes"] == 1
                             and p["global_batch"] == 128), None)
            for i, l in enumerate(launches_of(metrics)):
                steps = [s for s in l["steps"] if "comm_busy_s" in s]
                if (source, row["case"], i) in done or not steps:
                    continue
                med = lambda k: statistics.median(s[k] for s in steps)
                seg = report["segments"][i]["config"] if i < len(report["segments"]) else {}
                append_row(OUT, {"source": source, "case": row["case"], "launch": i, "objective": row["objective"],
                                 "seed": row["seed"], "phase": row["phase"], "when": row.get("when"),
                                 "machine": seg.get("machine"), "nodes": seg.get("nodes"),
                                 "workers": l["workers"], "batch_per_worker": l["batch_per_worker"],
                                 "steps": len(steps), "compute_s": med("compute_s"), "comm_busy_s": med("comm_busy_s"),
                                 "comm_exposed_s": med("comm_exposed_s"),
                                 "comm_hidden_fraction": med("comm_hidden_fraction"), "iter_s": med("iter_s"),
                                 "mean_iter_s": statistics.mean(s["iter_s"] for s in steps),
                                 "planned_one_node_iter_s": one_node})


def train(tula, batch, steps, metrics):
    return [tula, "train", "--model", "small_cnn", "--dataset", "fashion-mnist", "--batch-size", str(batch),
            "--optimizer", "ags", "--max-steps", str(steps), "--schedule", "constant", "--no-eval", "--progress",
            "none", "--tensor-stats-every", "0", "--seed", "1", "--metrics", metrics]


def step_medians(metrics, skip):
    steps = [r for r in map(json.loads, open(metrics)) if r.get("type") == "iter" and r["step"] > skip]
    med = lambda k: statistics.median(r[k] for r in steps)
    return {"steps": len(steps), "compute_s": med("compute_s"), "comm_busy_s": med("comm_busy_s"),
            "comm_exposed_s": med("comm_exposed_s"), "comm_hidden_fraction": med("comm_hidden_fraction"),
            "iter_s": med("iter_s")}


def run_arm(arm, tula, nodes, steps, skip):
    """One arm's run; the medians of its first node's worker."""
    (i0, n0), (i1, _) = nodes
    with tempfile.TemporaryDirectory() as tmp:
        m = [os.path.join(tmp, f"m{k}.jsonl") for k in range(2)]
        if arm == "together":
            port = str(free_port())
            cmds = [in_node(i) + [tula, "launch", "--nproc", "1", "--nnodes", "2", "--node-rank", str(k),
                                  "--master-addr", n0["address"], "--master-port", port, "--"] + train(tula, 64, steps, m[k])
                    for k, i in enumerate((i0, i1))]
        elif arm == "apart":
            cmds = [in_node(i) + train(tula, 64, steps, m[k]) for k, i in enumerate((i0, i1))]
        else:
            cmds = [in_node(i0) + train(tula, 128, steps, m[0])]
        runs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cmds]
        if any(r.wait(timeout=600) != 0 for r in runs):
            raise SystemExit(f"{arm}: a run failed: {' '.join(cmds[0])}")
        return step_medians(m[0], skip), " ".join(cmds[0])


def measure_ab(args):
    nodes = first_nodes_by_type(cluster_state())["emu-one"][:2]
    repeat0 = 1 + max((r["repeat"] for r in map(json.loads, open(AB_OUT))), default=-1) if os.path.exists(AB_OUT) else 0
    for repeat in range(repeat0, repeat0 + args.repeats):
        order = ["together", "apart", "alone"] if repeat % 2 == 0 else ["alone", "apart", "together"]
        for arm in order:
            medians, cmd = run_arm(arm, args.tula, nodes, args.steps, args.skip)
            row = {"repeat": repeat, "arm": arm, **medians, "batch_per_worker": 128 if arm == "alone" else 64,
                   "load_average": os.getloadavg()[0], "command": cmd,
                   "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state()}
            append_row(AB_OUT, row)
            print(json.dumps(row), flush=True)


def ab_table():
    rows = list(map(json.loads, open(AB_OUT)))
    print("| repeat | (a) over both nodes at 64: backward / allreduce busy / exposed / counted hidden / step (ms) "
          "| (b) each node alone at 64: backward (ms) | (c) one node at 128: backward per sample (us) "
          "| (a) backward per sample / (c)'s | (a) backward less (b)'s | that / (a)'s allreduce busy |")
    print("|---|---|---|---|---|---|---|")
    ratios, to_alone = [], []
    for repeat in sorted({r["repeat"] for r in rows}):
        arm = {r["arm"]: r for r in rows if r["repeat"] == repeat}
        if len(arm) < 3:
            continue
        a, b, c = arm["together"], arm["apart"], arm["alone"]
        growth = a["compute_s"] - b["compute_s"]
        ratios.append(growth / a["comm_busy_s"])
        to_alone.append((a["compute_s"] / 64) / (c["compute_s"] / 128))
        print(f"| {repeat} | {1e3 * a['compute_s']:.1f} / {1e3 * a['comm_busy_s']:.1f} / {1e3 * a['comm_exposed_s']:.1f}"
              f" / {a['comm_hidden_fraction']:.2f} / {1e3 * a['iter_s']:.1f} | {1e3 * b['compute_s']:.1f} | "
              f"{1e6 * c['compute_s'] / 128:.0f} | {to_alone[-1]:.2f} | {1e3 * growth:+.1f} ms | {ratios[-1]:.2f} |")
    if ratios:
        print(f"\nthe backward's growth over the allreduce's busy time, {len(ratios)} repeats: median "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}); the backward per sample over both "
              f"nodes against one node alone at 128: median {statistics.median(to_alone):.2f} "
              f"({min(to_alone):.2f}-{max(to_alone):.2f})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    jobs = sub.add_parser("jobs")
    jobs.add_argument("rows", nargs="+")
    ab = sub.add_parser("ab")
    ab.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    ab.add_argument("--repeats", type=int, default=5)
    ab.add_argument("--steps", type=int, default=130)
    ab.add_argument("--skip", type=int, default=30, help="the first steps, left out of the medians")
    ab.add_argument("--table", action="store_true")
    a = p.parse_args()
    if a.what == "ab":
        if not a.table:
            measure_ab(a)
        ab_table()
        return
    collect(a.rows)
    sources = {os.path.basename(x) for x in a.rows}
    rows = [r for r in map(json.loads, open(OUT)) if r["source"] in sources]
    one = lambda r: r["workers"] == 1 and r["machine"] == "emu-one" and r["batch_per_worker"] == 128
    two = lambda r: r["workers"] == 2 and r["machine"] == "emu-one" and r["nodes"] == 2
    print("| rows | seed | two-node launch | per-worker batch | backward per sample, two nodes / one node alone (us) "
          "| backward's growth per step | allreduce busy per step | growth / busy | exposed | counted hidden |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for r in rows:
        if not two(r):
            continue
        alone = [x for x in rows if one(x) and x["seed"] == r["seed"] and x["source"] == r["source"]]
        if not alone:
            continue
        per_sample = statistics.median(x["compute_s"] / x["batch_per_worker"] for x in alone)
        growth = r["compute_s"] - per_sample * r["batch_per_worker"]
        ratios.append(growth / r["comm_busy_s"])
        print(f"| {r['source'].replace('decision_oracle_', '').replace('.jsonl', '')} | {r['seed']} | {r['case']} "
              f"(launch {r['launch']}) | {r['batch_per_worker']} | {1e6 * r['compute_s'] / r['batch_per_worker']:.0f} / "
              f"{1e6 * per_sample:.0f} | {1e3 * growth:.1f} ms | {1e3 * r['comm_busy_s']:.1f} ms | "
              f"{growth / r['comm_busy_s']:.2f} | {1e3 * r['comm_exposed_s']:.1f} ms | {r['comm_hidden_fraction']:.2f} |")
    if ratios:
        print(f"\ngrowth / busy over {len(ratios)} launches: median {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f})")
    print("\n| rows | seed | the knee's plan: one emu-one node at 128, step | the pair's steps there (mean) | "
          "plan / pair |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["phase"] != "tune" or r["objective"] != "knee" or r["launch"] != 0 or not r["planned_one_node_iter_s"]:
            continue
        pair = [x["mean_iter_s"] for x in rows if one(x) and x["phase"] == "paired" and x["seed"] == r["seed"]
                and x["source"] == r["source"] and x["objective"] == "knee"]
        if not pair:
            continue
        measured = statistics.geometric_mean(pair)
        print(f"| {r['source'].replace('decision_oracle_', '').replace('.jsonl', '')} | {r['seed']} | "
              f"{r['planned_one_node_iter_s']:.4f} s | {' / '.join(f'{x:.4f}' for x in pair)} s | "
              f"{r['planned_one_node_iter_s'] / measured - 1:+.1%} |")


if __name__ == "__main__":
    main()
