#!/usr/bin/python3
"""What a node of the emulated cluster is, measured: its compute speed
against the whole machine, and its link's bandwidth and latency against what
tc was told. Run as root with the cluster up (scripts/emulated-cluster start).

  bench/emulated_cluster.py speed [--repeats 3] [--steps 60] [--batch 32]   # one worker per node type, and on the whole machine
  bench/emulated_cluster.py link [--repeats 3]                 # between two nodes of each type
  bench/emulated_cluster.py table                              # the tables docs/benchmarks/decisions.md shows

speed: `tula train` of small_cnn on synthetic 1x28x28 data at --batch, one
worker, inside the first node of each machine type (its cgroups and network
namespace, through `scripts/emulated-cluster exec`) and on the whole machine
(no cgroup, a thread per core), in turn; steps/s is the step count over the
summed step times after --warmup steps. A type's relative_speed (the
catalog's: one worker there against one worker of the profiled machine) is
its best steps/s over the whole machine's best: on a shared machine the
whole-machine run, a team of two threads that waits for the slower one at
every kernel, is the one other people's load slows most (several times),
while a node's single thread barely notices; the best run of each is the
least disturbed. The same training then runs in every node of the type at
once (independent runs, started together; their starts differ by LibTorch's
start-up, so the overlap is most of each run, not all): the speed a node
keeps while the others share the machine's caches and memory bandwidth.

link: bench/link_probe.py, its server in the first node of a type and its
client in the second: the median of 200 one-byte TCP round trips, and 16 MB
(0.1 Gb/s links: 4 MB) timed to the server's acknowledgement.

Rows go to bench/results/emulated_cluster/nodes.jsonl with the commit.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import ROOT, append_row, free_port, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results", "emulated_cluster", "nodes.jsonl")
SCRIPT = os.path.join(ROOT, "scripts", "emulated-cluster")


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return None


def cluster_state():
    prefix = os.environ.get("TULA_CLUSTER_PREFIX", "tula-emu")
    path = os.path.join(os.environ.get("TULA_CLUSTER_DIR", "/run/" + prefix), "state.json")
    if not os.path.exists(path):
        sys.exit(f"no emulated cluster at {path}: start it first (scripts/emulated-cluster start)")
    with open(path) as f:
        return json.load(f)


def first_nodes_by_type(state):
    """machine type -> its nodes, in the order the script made them."""
    types = {}
    for index, node in enumerate(state["nodes"]):
        types.setdefault(node["machine_type"], []).append((index, node))
    return types


def in_node(index):
    return [SCRIPT, "exec", str(index), "--"]


def train_command(tula, prefix_cmd, metrics, steps, warmup, batch):
    return prefix_cmd + [tula, "train", "--model", "small_cnn", "--dataset", "synthetic", "--synthetic-shape",
                         "1x28x28", "--synthetic-size", str(batch * (steps + warmup)), "--max-steps",
                         str(steps + warmup), "--batch-size", str(batch), "--schedule", "constant", "--no-eval",
                         "--progress", "none", "--tensor-stats-every", "0", "--metrics", metrics]


def steps_per_s_of_runs(tula, prefix_cmds, steps, warmup, batch):
    """Runs one training per prefix at once (each alone when there is one); their steps/s and the first command."""
    with tempfile.TemporaryDirectory() as tmp:
        metrics = [os.path.join(tmp, f"m{i}.jsonl") for i in range(len(prefix_cmds))]
        cmds = [train_command(tula, p, m, steps, warmup, batch) for p, m in zip(prefix_cmds, metrics)]
        runs = [subprocess.Popen(c, stdout=subprocess.DEVNULL) for c in cmds]
        if any(r.wait() != 0 for r in runs):
            raise RuntimeError("a training run failed: " + " ".join(cmds[0]))
        rates = []
        for m in metrics:
            iters = [json.loads(line) for line in open(m)]
            iters = [r for r in iters if r.get("type") == "iter" and r["step"] > warmup]
            rates.append(len(iters) / sum(r["iter_s"] for r in iters))
        return rates, " ".join(cmds[0])


def measure_speed(args):
    state = cluster_state()
    types = first_nodes_by_type(state)
    for repeat in range(args.repeats):
        (whole,), _ = steps_per_s_of_runs(args.tula, [[]], args.steps, args.warmup, args.batch)
        for machine_type, nodes in types.items():
            index, node = nodes[0]
            (rate,), cmd = steps_per_s_of_runs(args.tula, [in_node(index)], args.steps, args.warmup, args.batch)
            together, _ = steps_per_s_of_runs(args.tula, [in_node(i) for i, _ in nodes], args.steps, args.warmup,
                                              args.batch)
            row = {"kind": "speed", "machine_type": machine_type, "node": node["name"], "cpus": node["cpus"],
                   "cpuset": node["cpuset"], "steps_per_s": rate, "whole_machine_steps_per_s": whole,
                   "relative_speed": rate / whole, "nodes_together": len(nodes),
                   "steps_per_s_together": statistics.mean(together), "model": "small_cnn", "batch": args.batch,
                   "steps": args.steps, "repeat": repeat, "load_average": os.getloadavg()[0],
                   "cpu_model": cpu_model(), "command": cmd,
                   "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state()}
            append_row(args.out, row)
            print(json.dumps(row), flush=True)


def probe(server_index, client_index, address, megabytes):
    port = str(free_port())
    server = subprocess.Popen(in_node(server_index) + [os.path.join(HERE, "link_probe.py"), "serve", address, port],
                              stdout=subprocess.PIPE, text=True)
    try:
        ready = server.stdout.readline().strip()  # blocks until it listens (or dies: "")
        if ready != "listening":
            raise RuntimeError(f"the probe's server in node {server_index} did not start")
        cmd = in_node(client_index) + [os.path.join(HERE, "link_probe.py"), "measure", address, port,
                                       "--megabytes", str(megabytes)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300).stdout
        server.wait(timeout=60)  # it exits once it has acknowledged the last byte
        return json.loads(out), " ".join(cmd)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def measure_links(args):
    state = cluster_state()
    for repeat in range(args.repeats):
        for machine_type, nodes in first_nodes_by_type(state).items():
            if len(nodes) < 2:
                print(f"{machine_type}: one node only, no link between two of its nodes to measure", file=sys.stderr)
                continue
            (a, server), (b, client) = nodes[0], nodes[1]
            megabytes = 16 if server["network_gbps"] >= 0.5 else 4
            measured, cmd = probe(a, b, server["address"], megabytes)
            row = {"kind": "link", "machine_type": machine_type, "from": client["name"], "to": server["name"],
                   "told_gbps": server["network_gbps"], "told_latency_us": server["network_latency_us"],
                   "latency_emulated": state["latency_emulated"], **measured, "repeat": repeat,
                   "load_average": os.getloadavg()[0], "cpu_model": cpu_model(), "command": cmd,
                   "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state()}
            append_row(args.out, row)
            print(json.dumps(row), flush=True)


def print_tables(args):
    rows = [json.loads(line) for line in open(args.out) if line.strip()]
    speeds, links = {}, {}
    for r in rows:
        if r["kind"] == "speed":
            speeds.setdefault((r["batch"], r["machine_type"]), []).append(r)
        else:
            links.setdefault(r["machine_type"], []).append(r)
    print("| batch | machine type | CPU quota | steps/s in the node: best (median) "
          "| steps/s on the whole machine: best (median) | relative speed: best / best "
          "| with every node of the type busy: steps/s per node, best (median) | runs |")
    print("|---|---|---|---|---|---|---|---|")
    for (batch, t), rs in sorted(speeds.items()):
        node = [r["steps_per_s"] for r in rs]
        whole = [r["whole_machine_steps_per_s"] for r in rs]
        together = [r["steps_per_s_together"] for r in rs if "steps_per_s_together" in r]
        busy = (f"{rs[-1]['nodes_together']} nodes: {max(together):.2f} ({statistics.median(together):.2f})"
                if together else "-")
        print(f"| {batch} | {t} | {rs[0]['cpus']} | {max(node):.2f} ({statistics.median(node):.2f}) "
              f"| {max(whole):.2f} ({statistics.median(whole):.2f}) | {max(node) / max(whole):.2f} | {busy} "
              f"| {len(rs)} |")
    print()
    print("| machine type | told Gb/s | measured Gb/s (median) | told latency us | measured one-way us (median RTT/2) "
          "| latency emulated | runs |")
    print("|---|---|---|---|---|---|---|")
    for t, rs in sorted(links.items()):
        print(f"| {t} | {rs[0]['told_gbps']} | {statistics.median(r['gbps'] for r in rs):.3f} "
              f"| {rs[0]['told_latency_us']} | {statistics.median(r['one_way_us'] for r in rs):.1f} "
              f"| {'yes' if rs[0]['latency_emulated'] else 'no'} | {len(rs)} |")
    commits = sorted({(r.get("commit") or "?")[:10] for r in rows})
    machines = sorted({r.get("cpu_model") or "?" for r in rows})
    print(f"\ncommits: {', '.join(commits)}; CPU: {', '.join(machines)}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["speed", "link", "table"])
    p.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--out", default=RESULTS)
    a = p.parse_args()
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    git_state()  # taken once, before any row
    {"speed": measure_speed, "link": measure_links, "table": print_tables}[a.what](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
