#!/usr/bin/python3
"""The emulated cluster as a Slurm cluster (scripts/emulated-cluster start,
one slurmd per node): what Slurm adds, and whether its job steps get what
the catalog says. Rows go to bench/results/slurm/; docs/slurm.md shows them.

  bench/slurm_cluster.py startup [--pairs 3]   # a launch's start-up and end: emulated backend vs Slurm backend
  bench/slurm_cluster.py nodes                 # CPU share and link measured inside Slurm job steps
  bench/slurm_cluster.py nodefail [--runs 3] [--first-seed 1]   # a two-node tune job loses a node: steps lost,
                                               # recovery, target
  bench/slurm_cluster.py twojobs [--runs 3]    # two `tula serve` jobs submitted together, each wanting both
                                               # emu-one nodes: queue waits, both finish, no node held twice
  bench/slurm_cluster.py tune --name N -- ARGS # one `tula tune --backend slurm --resources catalogs/emulated.json`
                                               # job on the cluster, its report kept
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

from bench_common import append_row, git_state, launches_of, read_rows

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


def iter_records(metrics):
    rows = []
    with open(metrics) as f:
        for line in f:
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("type") == "iter":
                rows.append(j)
    return rows


def steps_by_launch(metrics):
    """The step numbers of each launch that made a step, in order (bench_common.launches_of)."""
    launches = [[r["step"] for r in launch["steps"]] for launch in launches_of(metrics)]
    return [steps for steps in launches if steps]


def last_step(metrics):
    try:
        recs = iter_records(metrics)
    except OSError:
        return 0
    return recs[-1]["step"] if recs else 0


def script(*args, prefix):
    env = dict(os.environ, TULA_CLUSTER_PREFIX=prefix)
    return subprocess.run([os.path.join(ROOT, "scripts", "emulated-cluster"), *args], env=env, capture_output=True,
                          text=True, timeout=300)


def tune_command(args, state, out, extra):
    return [args.tula, "tune", "--model", "small_cnn", "--dataset", "synthetic", "--synthetic-size", "4096",
            "--backend", "slurm", "--resources", os.path.join(ROOT, "catalogs", "emulated.json"),
            "--profile", os.path.join(HERE, "results", "emulated_cluster", "profile_small_cnn_synthetic.json"),
            "--progress", "lines", "--out", out] + extra


def measure_nodefail(args):
    state = cluster_state()
    prefix = state["prefix"]
    victim = nodes_of(state, "emu-one")[1]["name"]
    every = 4
    for run in range(args.runs):
        r = script("revive", prefix=prefix)  # every node in service before the run
        if r.returncode != 0:
            raise RuntimeError("revive failed: " + r.stdout + r.stderr)
        out = f"/tmp/tula-slurm-bench/nodefail-{run}-{int(time.time())}"
        extra = ["--target-accuracy", "0.01", "--max-epochs", "3", "--start-at", "1x16", "--start-on", "emu-one:2",
                 "--watch-every", str(every), "--max-retries", "2", "--no-replan", "--no-history", "--seed", str(args.first_seed + run)]
        cmd = tune_command(args, state, out, extra)
        os.makedirs(out, exist_ok=True)
        with open(out + ".log", "w") as log:
            job = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=slurm_env(state))
            deadline = time.time() + 600
            while last_step(out + "/metrics.jsonl") < 2 * every + 1:
                if job.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"the job ended or stalled before its step {2 * every + 1}: see {out}.log")
                time.sleep(0.2)
            killed_at = time.time()
            killed_step = last_step(out + "/metrics.jsonl")
            r = script("fail", victim, prefix=prefix)
            if r.returncode != 0:
                job.kill()
                raise RuntimeError(r.stdout + r.stderr)
            rc = job.wait(timeout=1800)
        with open(out + "/report.json") as f:
            report = json.load(f)
        segs = report["segments"]
        lost = next(i for i in range(len(segs) - 1) if segs[i].get("exit", "").startswith("worker died"))
        launches = steps_by_launch(out + "/metrics.jsonl")
        # From the failed launch's last step back to the checkpoint the next launch resumed from.
        failed_last, resumed = launches[-2][-1], launches[-1][0] - 1
        # The first step after the failure: the relaunch's first step record (a record of the failed launch's
        # surviving worker, written after the kill, is not one).
        relaunch = [l for l in launches_of(out + "/metrics.jsonl") if l["steps"]][-1]
        first_after = relaunch["steps"][0]
        replan = next((r for r in report["replans"] if "the launch failed" in r.get("reason", "")), None)
        failed_end = segs[lost].get("end_t_s")
        row = {"kind": "nodefail", "run": run, "exit_code": rc, "state": report["state"],
               "reason": report.get("reason", ""), "victim": victim, "killed_at_step": killed_step,
               "failed_launch_last_step": failed_last, "resumed_from_step": resumed,
               "steps_lost": failed_last - resumed, "checkpoint_every": every,
               "launch_failed_after_start_s": (failed_end - segs[lost]["start_t_s"]) if failed_end else None,
               "kill_to_first_step_after_s": (first_after["time"] - killed_at) if first_after else None,
               # The relaunch's start-up as the runner measured it (the job's only restart), and what the
               # re-plan priced it at: the start-up of the launch before, measured the same way.
               "restart_measured_s": report["phases"]["restart_s"],
               "restart_predicted_s": replan.get("restart_cost_s") if replan else None,
               "from": segs[lost]["config"], "to": segs[lost + 1]["config"],
               "replan_reason": replan.get("reason") if replan else None, "out": out,
               "command": " ".join(cmd), **stamp()}
        append_row(os.path.join(OUT_DIR, "nodefail.jsonl"), row)
        print(json.dumps(row), flush=True)
        r = script("revive", prefix=prefix)
        if r.returncode != 0:
            raise RuntimeError("revive failed: " + r.stdout + r.stderr)


def http(port, method, path, body=None):
    import urllib.request
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def measure_twojobs(args):
    state = cluster_state()
    for run in range(args.runs):
        work = f"/tmp/tula-slurm-bench/twojobs-{run}-{int(time.time())}"
        os.makedirs(work, exist_ok=True)
        ready = os.path.join(work, "ready.json")
        serve = [args.tula, "serve", "--listen", "127.0.0.1:0", "--db", os.path.join(work, "jobs.db"), "--workdir",
                 os.path.join(work, "work"), "--ready-file", ready, "--backend", "slurm", "--max-running", "2",
                 "--data-root", ROOT]
        with open(work + "/serve.log", "w") as log:
            server = subprocess.Popen(serve, stdout=log, stderr=subprocess.STDOUT, env=slurm_env(state))
            try:
                deadline = time.time() + 60
                while not os.path.exists(ready):
                    if server.poll() is not None or time.time() > deadline:
                        raise RuntimeError(f"the server did not start: see {work}/serve.log")
                    time.sleep(0.1)
                port = json.load(open(ready))["port"]
                spec = {"model": "small_cnn", "dataset": "synthetic", "synthetic_size": 4096, "target_accuracy": 0.01,
                        "max_epochs": 3, "resources": os.path.join(ROOT, "catalogs", "emulated.json"),
                        "profile": os.path.join(HERE, "results", "emulated_cluster", "profile_small_cnn_synthetic.json"),
                        "start_at": "1x16", "start_on": "emu-one:2", "no_replan": True, "seed": run + 1}
                ids = [http(port, "POST", "/v1/jobs", spec)["id"] for _ in range(2)]
                deadline = time.time() + 900
                while True:
                    jobs = [http(port, "GET", f"/v1/jobs/{i}") for i in ids]
                    if all(j["state"] in ("succeeded", "failed", "cancelled") for j in jobs) or time.time() > deadline:
                        break
                    time.sleep(1)
            finally:
                server.terminate()
                server.wait(timeout=120)
        # When each job's workers ran: its metrics' first record (a worker's start) to its last, wall-clock
        # times the workers stamped; two jobs that each hold both nodes must not overlap.
        held = []
        for job_id in ids:
            times = [json.loads(l)["time"] for l in open(os.path.join(work, "work", "jobs", str(job_id),
                                                                      "metrics.jsonl")) if l.strip()]
            held.append((min(times), max(times)))
        for job_id, job in zip(ids, jobs):
            with open(os.path.join(work, "work", "jobs", str(job_id), "report.json")) as f:
                report = json.load(f)
            first = report["segments"][0]
            row = {"kind": "twojobs", "run": run, "job": job_id, "state": job["state"],
                   "queued_s": first.get("queued_s"), "queue_billed": first.get("queue_billed"),
                   "queue_s": report["phases"].get("queue_s", 0.0), "restart_s": report["phases"]["restart_s"],
                   "total_s": report["phases"]["total_s"], "cost": report["measured"]["cost"],
                   "nodes": first["config"]["nodes"], "segments": len(report["segments"]),
                   "work": work, "command": " ".join(serve), **stamp()}
            append_row(os.path.join(OUT_DIR, "twojobs.jsonl"), row)
            print(json.dumps(row), flush=True)
        (a0, a1), (b0, b1) = sorted(held)
        append_row(os.path.join(OUT_DIR, "twojobs.jsonl"),
                   {"kind": "twojobs-overlap", "run": run, "first_ran_s": [a0, a1], "second_ran_s": [b0, b1],
                    "gap_s": b0 - a1, "work": work, **stamp()})


def run_tune(args):
    state = cluster_state()
    out = args.out or f"/tmp/tula-slurm-bench/tune-{int(time.time())}"
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    cmd = [args.tula, "tune", "--backend", "slurm", "--resources", os.path.join(ROOT, "catalogs", "emulated.json"),
           "--progress", "lines", "--out", out] + rest
    t0 = time.time()
    rc = subprocess.run(cmd, env=slurm_env(state)).returncode
    with open(out + "/report.json") as f:
        report = json.load(f)
    keep = os.path.join(OUT_DIR, f"tune_{args.name}.report.json")
    with open(keep, "w") as f:
        json.dump(report, f, indent=1)
    row = {"kind": "tune", "name": args.name, "exit_code": rc, "state": report["state"], "reason": report["reason"],
           "chosen": report.get("chosen"), "segments": [s["config"] for s in report["segments"]],
           "notes": [n for n in report.get("notes", []) if "Slurm nodes" in n or "not planned" in n],
           "wall_s": time.time() - t0, "report": os.path.relpath(keep, ROOT), "command": " ".join(cmd), **stamp()}
    append_row(os.path.join(OUT_DIR, "tune.jsonl"), row)
    print(json.dumps(row, indent=1), flush=True)


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
    print_nodefail_table()


def print_nodefail_table():
    rows = read_rows(os.path.join(OUT_DIR, "nodefail.jsonl"))
    if not rows:
        return
    print()
    print("| run | target reached | killed at step | failed launch's last step | resumed from | steps lost "
          "(checkpoint every) | kill to the first step after | re-planned to |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        to = r["to"]
        print(f"| {r['run']} | {'yes' if r['state'] == 'succeeded' else 'no'} ({r['exit_code']}) | {r['killed_at_step']} "
              f"| {r['failed_launch_last_step']} | {r['resumed_from_step']} | {r['steps_lost']} ({r['checkpoint_every']}) "
              f"| {r['kill_to_first_step_after_s']:.1f} s | {to['nodes']} x {to['machine']}, "
              f"{to['workers_per_node']}x{to['batch_per_worker']} per node |")


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
    f = sub.add_parser("nodefail")
    f.add_argument("--runs", type=int, default=3)
    f.add_argument("--first-seed", type=int, default=1, help="run i trains at seed first-seed + i")
    f.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    f.set_defaults(run=measure_nodefail)
    w = sub.add_parser("twojobs")
    w.add_argument("--runs", type=int, default=3)
    w.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    w.set_defaults(run=measure_twojobs)
    u = sub.add_parser("tune")
    u.add_argument("--name", required=True)
    u.add_argument("--out")
    u.add_argument("--tula", default=os.path.join(ROOT, "build", "src", "tula"))
    u.add_argument("rest", nargs=argparse.REMAINDER)
    u.set_defaults(run=run_tune)
    t = sub.add_parser("tables")
    t.set_defaults(run=print_tables)
    args = p.parse_args()
    os.makedirs(OUT_DIR, exist_ok=True)
    args.run(args)


if __name__ == "__main__":
    main()
