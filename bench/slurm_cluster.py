#!/usr/bin/python3
"""The emulated cluster as a Slurm cluster (scripts/emulated-cluster start,
one slurmd per node): what Slurm adds, and whether its job steps get what
the catalog says. Rows go to bench/results/slurm/; docs/slurm.md shows them.

  bench/slurm_cluster.py startup [--pairs 3]   # a launch's start-up and end: emulated backend vs Slurm backend
  bench/slurm_cluster.py nodes                 # CPU share and link measured inside Slurm job steps
  bench/slurm_cluster.py tables                # the tables of docs/slurm.md from the rows

Needs the cluster up with its default prefix (or TULA_CLUSTER_PREFIX), the
build (build/src/tula, build/bench/tula_backend_startup), and root.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_common import append_row, git_state, read_rows

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "results", "slurm")


def cluster_state():
    prefix = os.environ.get("TULA_CLUSTER_PREFIX", "tula-emu")
    with open(os.environ.get("TULA_CLUSTER_DIR", f"/run/{prefix}") + "/state.json") as f:
        state = json.load(f)
    if not state.get("slurm_conf"):
        sys.exit("the emulated cluster runs no Slurm (started with TULA_CLUSTER_SLURM=0)")
    return state


def slurm_env(state):
    return dict(os.environ, SLURM_CONF=state["slurm_conf"])


def nodes_of(state, machine_type):
    return [n for n in state["nodes"] if n["machine_type"] == machine_type]


def stamp():
    return {"load_average": os.getloadavg()[0], "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **git_state()}


def launch_once(args, state, backend, machine_type, nodes, pair):
    work = f"/tmp/tula-slurm-bench/{backend}-{machine_type}-{nodes}-{pair}"
    cmd = [args.startup_bin, "--tula", args.tula, "--backend", backend, "--machine-type", machine_type,
           "--nodes", str(nodes), "--workers", str(nodes), "--steps", str(args.steps), "--dir", work,
           "--cluster-state", os.path.join(os.path.dirname(state["slurm_conf"]), "..", "state.json")]
    out = subprocess.run(cmd, capture_output=True, text=True, env=slurm_env(state), timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stdout}{out.stderr}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    return {**row, "kind": "startup", "pair": pair, "command": " ".join(cmd)}


def measure_startup(args):
    state = cluster_state()
    out = os.path.join(OUT_DIR, "startup.jsonl")
    for machine_type, nodes in ((t, int(n)) for t, n in (l.split(":") for l in args.layouts.split(","))):
        for pair in range(args.pairs):
            # Alternated: which backend goes first changes every pair.
            order = ["emulated", "slurm"] if pair % 2 == 0 else ["slurm", "emulated"]
            for position, backend in enumerate(order):
                row = launch_once(args, state, backend, machine_type, nodes, pair)
                row.update(position=position, **stamp())
                append_row(out, row)
                print(json.dumps(row), flush=True)


def run_step(state, args_list, timeout=300):
    return subprocess.run(["srun", "--kill-on-bad-exit=1"] + args_list, capture_output=True, text=True,
                          env=slurm_env(state), timeout=timeout)


# Inside a task: its CPU time over 3 s of wall time spinning, and the quota of
# the cgroup it runs in with the times the kernel throttled it meanwhile
# (a share below the quota on a busy machine is the machine's load; one
# above it would be a quota not applied).
BUSY = r"""
import json, os, time
def cpu_dir():
    for line in open('/proc/self/cgroup'):
        _, controllers, path = line.rstrip('\n').split(':', 2)
        if 'cpu' in controllers.split(','):
            return '/sys/fs/cgroup/cpu' + path
        if controllers == '' and os.path.exists('/sys/fs/cgroup/cgroup.controllers'):
            return '/sys/fs/cgroup' + path
def quota(d):
    if os.path.exists(d + '/cpu.max'):
        q, p = open(d + '/cpu.max').read().split()
        return None if q == 'max' else int(q) / int(p)
    q = int(open(d + '/cpu.cfs_quota_us').read())
    return None if q < 0 else q / int(open(d + '/cpu.cfs_period_us').read())
def throttled(d):
    for line in open(d + '/cpu.stat'):
        k, v = line.split()
        if k == 'nr_throttled':
            return int(v)
d = cpu_dir()
t0 = throttled(d)
w0, c0 = time.time(), time.process_time()
while time.time() - w0 < 3.0: pass
share = (time.process_time() - c0) / (time.time() - w0)
print(json.dumps({'node': os.uname().nodename, 'cpu_share': share, 'cgroup': d, 'cgroup_quota_cpus': quota(d),
                  'throttled_periods': throttled(d) - t0}))
"""


def measure_nodes(args):
    state = cluster_state()
    out = os.path.join(OUT_DIR, "node_checks.jsonl")
    types = sorted({n["machine_type"] for n in state["nodes"]})
    for repeat in range(args.repeats):
        for machine_type in types:
            nodes = nodes_of(state, machine_type)
            # CPU share: every node of the type at once, one task each, inside a job step.
            cmd = [f"--nodes={len(nodes)}", "--ntasks-per-node=1", f"--constraint={machine_type}",
                   "/usr/bin/python3", "-c", BUSY]
            r = run_step(state, cmd)
            if r.returncode != 0:
                raise RuntimeError(f"srun {' '.join(cmd)}: {r.stdout}{r.stderr}")
            for line in r.stdout.splitlines():
                m = json.loads(line)
                node = next(n for n in state["nodes"] if n["name"] == m["node"])
                row = {"kind": "cpu_share", "machine_type": machine_type, "node": m["node"],
                       "told_cpus": node["cpus"], **{k: v for k, v in m.items() if k != "node"},
                       "nodes_at_once": len(nodes),
                       "repeat": repeat, "command": "srun " + " ".join(cmd[:3]) + " python3 -c BUSY", **stamp()}
                append_row(out, row)
                print(json.dumps(row), flush=True)
            # Link: two nodes of the type, rank 0 serves, rank 1 measures, inside one job step.
            if len(nodes) < 2:
                continue
            megabytes = 16 if nodes[0]["network_gbps"] >= 0.5 else 4
            probe = os.path.join(HERE, "link_probe.py")
            script = (f"if [ \"$SLURM_PROCID\" = 0 ]; then exec {probe} serve {nodes[0]['address']} 15999; fi; "
                      f"for i in $(seq 100); do {probe} measure {nodes[0]['address']} 15999 --megabytes {megabytes} "
                      f"2>/dev/null && exit 0; sleep 0.1; done; exit 1")
            cmd = ["--nodes=2", "--ntasks-per-node=1", f"--constraint={machine_type}",
                   f"--nodelist={nodes[0]['name']},{nodes[1]['name']}", "sh", "-c", script]
            r = run_step(state, cmd)
            measured = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
            if r.returncode != 0 or not measured:
                raise RuntimeError(f"srun {' '.join(cmd)}: {r.stdout}{r.stderr}")
            row = {"kind": "link", "machine_type": machine_type, "from": nodes[1]["name"], "to": nodes[0]["name"],
                   "told_gbps": nodes[0]["network_gbps"], **measured[0], "repeat": repeat,
                   "command": "srun " + " ".join(cmd[:4]) + " sh -c LINK_PROBE", **stamp()}
            append_row(out, row)
            print(json.dumps(row), flush=True)


def print_tables(args):
    rows = read_rows(os.path.join(OUT_DIR, "startup.jsonl"))
    if rows:
        print("| layout | emulated: request to first step | Slurm: request to first step | ratio of medians "
              "| median of pair ratios | emulated: last step to end | Slurm: last step to end |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        layouts = sorted({(r["machine_type"], r["nodes"]) for r in rows})
        for machine_type, nodes in layouts:
            mine = [r for r in rows if (r["machine_type"], r["nodes"]) == (machine_type, nodes)]
            by = {b: {r["pair"]: r for r in mine if r["backend"] == b} for b in ("emulated", "slurm")}
            pairs = sorted(set(by["emulated"]) & set(by["slurm"]))
            if not pairs:
                continue
            first = {b: [by[b][p]["submit_to_first_step_s"] for p in pairs] for b in by}
            end = {b: [by[b][p]["last_step_to_end_s"] for p in pairs] for b in by}
            ratios = [by["slurm"][p]["submit_to_first_step_s"] / by["emulated"][p]["submit_to_first_step_s"]
                      for p in pairs]
            print(f"| {nodes} x {machine_type} ({len(pairs)} pairs) | {statistics.median(first['emulated']):.2f} s "
                  f"({min(first['emulated']):.2f}-{max(first['emulated']):.2f}) | "
                  f"{statistics.median(first['slurm']):.2f} s ({min(first['slurm']):.2f}-{max(first['slurm']):.2f}) | "
                  f"{statistics.median(first['slurm']) / statistics.median(first['emulated']):.2f} | "
                  f"{statistics.median(ratios):.2f} | {statistics.median(end['emulated']):.2f} s | "
                  f"{statistics.median(end['slurm']):.2f} s |")
    rows = read_rows(os.path.join(OUT_DIR, "node_checks.jsonl"))
    if rows:
        print()
        print("| machine type | what | catalog | measured inside a job step (median, min-max) | runs |")
        print("| --- | --- | --- | --- | --- |")
        for machine_type in sorted({r["machine_type"] for r in rows}):
            shares = [r["cpu_share"] for r in rows if r["kind"] == "cpu_share" and r["machine_type"] == machine_type]
            told = next(r["told_cpus"] for r in rows if r["kind"] == "cpu_share" and r["machine_type"] == machine_type)
            quotas = sorted({r.get("cgroup_quota_cpus") for r in rows
                             if r["kind"] == "cpu_share" and r["machine_type"] == machine_type})
            print(f"| {machine_type} | CPU quota of the task's cgroup | {told} | {', '.join(str(q) for q in quotas)} "
                  f"| {len(shares)} |")
            print(f"| {machine_type} | CPU share of a spinning task | at most {told} | {statistics.median(shares):.3f} "
                  f"({min(shares):.3f}-{max(shares):.3f}) | {len(shares)} |")
            links = [r for r in rows if r["kind"] == "link" and r["machine_type"] == machine_type]
            if links:
                g = [r["gbps"] for r in links]
                print(f"| {machine_type} | link Gb/s | {links[0]['told_gbps']} | {statistics.median(g):.3f} "
                      f"({min(g):.3f}-{max(g):.3f}) | {len(g)} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("startup")
    s.add_argument("--pairs", type=int, default=3)
    s.add_argument("--layouts", default="emu-one:2,emu-half:4", help="TYPE:NODES,... (one worker per node)")
    s.add_argument("--steps", type=int, default=5)
    s.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    s.add_argument("--startup-bin", default=os.path.join(ROOT, "build", "bench", "tula_backend_startup"))
    s.set_defaults(run=measure_startup)
    n = sub.add_parser("nodes")
    n.add_argument("--repeats", type=int, default=3)
    n.set_defaults(run=measure_nodes)
    t = sub.add_parser("tables")
    t.set_defaults(run=print_tables)
    args = p.parse_args()
    os.makedirs(OUT_DIR, exist_ok=True)
    args.run(args)


if __name__ == "__main__":
    main()
