#!/usr/bin/python3
"""Held-out prediction error of Tula's parallel-systems model.

For each model: `tula profile --quick` fits the model on its own grid
(per-worker batches 4, 16, 64, 256; allreduce and data-parallel steps with the
profiled worker counts). Then configurations the fit never saw (other
per-worker batches, other worker counts) are predicted with `tula predict`
and run with `tula train` on synthetic data of the model's shape; the
measured iteration time (median over the steps after warm-up) and epoch time
(the epoch record, evaluation off) are compared with the predictions.

Appends one JSON line per configuration to --out and prints, per model, the
mean absolute percentage error (MAPE) of iteration and epoch time.

  bench/prediction_error.py --tula build/src/tula [--models small_cnn,resnet20] [--batches 8,32,128] [--workers 1,2,4]
  bench/prediction_error.py --tula build/src/tula --full-profile --batches 12,48,96   (finer profile grid)
  bench/prediction_error.py --tula build/src/tula --hosts 2 --link-mbit 1000   (network namespaces; root)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import free_port, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = {"small_cnn": "1x28x28", "resnet20": "3x32x32", "resnet18": "3x32x32", "vgg11": "3x32x32",
          "mobilenet_v3_small": "3x32x32", "resnet32": "3x32x32"}
STEPS = 12    # measured steps per held-out run (plus the warm-up)
WARMUP = 2



def profile(tula, model, workers, out, full=False):
    effort = ["--max-batch-size", "256"] if full else ["--quick"]
    cmd = [tula, "profile", "--model", model, "--input-shape", SHAPES[model], "--classes", "10", *effort,
           "--workers", ",".join(str(w) for w in workers if w > 1) or "2", "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def profile_path(directory, model, full):
    """Where a model's profile is kept: quick and full profiles side by side."""
    return os.path.join(directory, f"{model}{'-full' if full else ''}.json")


def predict(tula, prof, workers, batch, samples, nodes=1, catalog=None, machine=None):
    cmd = [tula, "predict", "--profile", prof, "--workers", str(workers), "--batch-size", str(batch),
           "--dataset-size", str(samples), "--test-size", "0", "--epochs", "1", "--json"]
    if nodes > 1:
        cmd += ["--nodes", str(nodes)]
    if catalog:
        cmd += ["--catalog", catalog, "--machine", machine]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out)
    return j["iteration_s"]["estimate"], j["epoch_s"]["estimate"]


def measure_local(tula, model, workers, batch, samples):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [tula, "train", "--model", model, "--dataset", "synthetic", "--synthetic-shape", SHAPES[model],
               "--synthetic-size", str(samples), "--epochs", "1", "--batch-size", str(batch), "--lr", "0.01",
               "--schedule", "constant", "--no-eval", "--progress", "none", "--tensor-stats-every", "0",
               "--metrics", metrics]
        if workers > 1:
            cmd += ["--nproc", str(workers), "--master-port", str(free_port())]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return read_metrics(metrics)


class Namespaces:
    """H hosts as network namespaces tula-h0.. on a bridge, each with one veth
    whose egress is rate-limited by a token bucket (tbf; netem as well when a
    delay is asked for, where the kernel has it): real TCP links with real
    limits between processes of this machine. Needs root; removed on exit."""

    def __init__(self, hosts, mbit, delay_ms):
        self.hosts, self.names = hosts, [f"tula-h{i}" for i in range(hosts)]
        self.addrs = [f"10.77.0.{i + 1}" for i in range(hosts)]
        self.mbit, self.delay_ms = mbit, delay_ms

    def sh(self, cmd):
        subprocess.run(cmd, shell=True, check=True)

    def __enter__(self):
        self.__exit__()
        self.sh("ip link add tula-br type bridge && ip link set tula-br up")
        for i, ns in enumerate(self.names):
            self.sh(f"ip netns add {ns} && ip link add tula-v{i} type veth peer name eth0 netns {ns}")
            self.sh(f"ip link set tula-v{i} master tula-br && ip link set tula-v{i} up")
            self.sh(f"ip -n {ns} addr add {self.addrs[i]}/24 dev eth0 && ip -n {ns} link set eth0 up"
                    f" && ip -n {ns} link set lo up")
            self.sh(f"ip netns exec {ns} tc qdisc add dev eth0 root {self.shaping()}")
        return self

    def shaping(self):
        if self.delay_ms > 0:  # netem shapes rate and delay together
            return f"netem rate {self.mbit}mbit delay {self.delay_ms}ms limit 100000"
        # A bucket of 1 ms at the line rate (at least 16 KiB), and up to 100 ms queued before drops.
        burst = max(16384, int(self.mbit * 1e6 / 8 / 1000))
        return f"tbf rate {self.mbit}mbit burst {burst} latency 100ms"

    def __exit__(self, *exc):
        for ns in [f"tula-h{i}" for i in range(16)]:
            subprocess.run(f"ip netns del {ns}", shell=True, stderr=subprocess.DEVNULL)
        subprocess.run("ip link del tula-br", shell=True, stderr=subprocess.DEVNULL)

    def catalog(self, path, relative_speed=1.0):
        write_namespace_catalog(path, self.hosts, self.mbit, self.delay_ms, relative_speed)

    def measure(self, tula, model, batch, samples):
        """One worker per host, one intra-op thread each (the hosts share this machine's cores)."""
        port = str(free_port())
        with tempfile.TemporaryDirectory() as tmp:
            metrics = os.path.join(tmp, "m.jsonl")
            procs = []
            for i, ns in enumerate(self.names):
                cmd = ["ip", "netns", "exec", ns, tula, "launch", "--nproc", "1", "--nnodes", str(self.hosts),
                       "--node-rank", str(i), "--master-addr", self.addrs[0], "--master-port", port, "--",
                       tula, "train", "--model", model, "--dataset", "synthetic", "--synthetic-shape", SHAPES[model],
                       "--synthetic-size", str(samples), "--epochs", "1", "--batch-size", str(batch), "--lr", "0.01",
                       "--schedule", "constant", "--no-eval", "--progress", "none", "--tensor-stats-every", "0",
                       "--threads", "1", "--collective-timeout", "60", "--rendezvous-timeout", "60",
                       "--metrics", metrics]
                procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))
            if any(p.wait(timeout=900) != 0 for p in procs):
                raise RuntimeError("a namespace host failed")
            return read_metrics(metrics)


def write_namespace_catalog(path, hosts, mbit, delay_ms, relative_speed):
    machine = {"name": "ns-host", "description": f"one network namespace, {mbit} Mb/s, {delay_ms} ms",
               "device_kind": "cpu", "devices_per_node": 1, "max_workers_per_node": 1,
               "device_memory_gib": 8, "price_per_hour": 1.0, "network_gbps": mbit / 1000.0,
               "network_latency_us": delay_ms * 1000.0, "max_nodes": hosts, "relative_speed": relative_speed}
    with open(path, "w") as f:
        json.dump({"format": "tula-catalog", "version": 1, "currency": "USD", "machine_types": [machine]}, f)


def shared_machine_speed(prof, hosts):
    """The namespace hosts are slices of this one machine: while all of them
    compute, each runs at the speed the profile itself measured for `hosts`
    workers sharing a node (its contention samples), not at the speed of a
    worker alone. Returned as the catalog's relative speed, 1 / slowdown."""
    compute = json.load(open(prof))["fitted"]["compute"]
    at = compute.get("contention_at") or []
    gammas = compute["contention"]["values"]
    if hosts not in at or not gammas:
        return 1.0
    gamma = gammas[f"gamma_k{hosts}"] if f"gamma_k{hosts}" in gammas else list(gammas.values())[at.index(hosts)]
    return 1.0 / (1.0 + gamma * (hosts - 1))


def record(out, config, iteration, epoch):
    """Appends one configuration's predicted and measured times to `out`."""
    row = dict(config, predicted_iter_s=iteration[0], measured_iter_s=iteration[1], predicted_epoch_s=epoch[0],
               measured_epoch_s=epoch[1], iter_error=abs(iteration[0] - iteration[1]) / iteration[1],
               epoch_error=abs(epoch[0] - epoch[1]) / epoch[1], **git_state())
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def read_metrics(path):
    rows = [json.loads(line) for line in open(path)]
    iters = [r["iter_s"] for r in rows if r.get("type") == "iter" and r["step"] > WARMUP]
    epoch = [r["epoch_s"] for r in rows if r.get("type") == "epoch"][0]
    return statistics.median(iters), epoch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tula", required=True)
    p.add_argument("--models", default="small_cnn,resnet20,resnet18,vgg11")
    p.add_argument("--batches", default="8,32,128")
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--out", default=os.path.join(HERE, "results", "prediction_error.jsonl"))
    p.add_argument("--repeats", type=int, default=3,
                   help="runs of each held-out configuration; the median is compared and the spread kept, "
                        "which is this machine's own repeatability, the floor under any prediction error")
    p.add_argument("--full-profile", action="store_true",
                   help="profile without --quick (per-worker batches 1, 2, 4, ..., 256, more repeats); "
                        "hold out batches off that grid, e.g. --batches 12,48,96")
    p.add_argument("--profile-dir", default=None, help="keep the profiles here (default: a temporary directory)")
    p.add_argument("--hosts", type=int, default=0, help="run on this many network-namespace hosts instead")
    p.add_argument("--link-mbit", type=float, default=1000, help="namespace link rate, Mb/s")
    p.add_argument("--delay-ms", type=float, default=0,
                   help="namespace link delay, ms (needs the kernel's netem qdisc; 0: rate limit only)")
    p.add_argument("--shared-speed", action="store_true",
                   help="namespace hosts: predict compute at the profile's own slowdown for that many workers "
                        "sharing one machine (they do share this one) instead of a worker's speed alone")
    p.add_argument("--repredict", metavar="ROWS",
                   help="no runs: predict the configurations in ROWS again from the profiles in --profile-dir "
                        "with this tula (e.g. after a model change) and append rows with the same measurements to --out")
    args = p.parse_args()
    git_state()  # the commit the runs start at, recorded in each row
    if args.repredict:
        return repredict(args)
    if args.hosts:
        return main_namespaces(args)
    tula = os.path.abspath(args.tula)
    workers = [int(w) for w in args.workers.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    pdir = args.profile_dir or tempfile.mkdtemp()
    os.makedirs(pdir, exist_ok=True)
    summary = []
    for model in args.models.split(","):
        prof = profile_path(pdir, model, args.full_profile)
        profile(tula, model, workers, prof, full=args.full_profile)
        rows = []
        for n in workers:
            for b in batches:
                samples = b * n * (STEPS + WARMUP + 1)
                pred_iter, pred_epoch = predict(tula, prof, n, b, samples)
                runs = [measure_local(tula, model, n, b, samples) for _ in range(args.repeats)]
                meas_iter, meas_epoch = (statistics.median(r[i] for r in runs) for i in (0, 1))
                rows.append(record(args.out, {"model": model, "workers": n, "nodes": 1, "batch_per_worker": b,
                                              "samples": samples, "measured_iter_runs": [r[0] for r in runs],
                                              "profile": "full" if args.full_profile else "quick"},
                                   (pred_iter, meas_iter), (pred_epoch, meas_epoch)))
        summary.append((model, rows))
    print("| model | configurations | MAPE iteration time | MAPE epoch time | worst (iteration) "
          "| repeat spread (median) |")
    print("|---|---|---|---|---|---|")
    for model, rows in summary:
        worst = max(rows, key=lambda r: r["iter_error"])
        spread = statistics.median(max(r["measured_iter_runs"]) / min(r["measured_iter_runs"]) - 1 for r in rows)
        print(f"| {model} | {len(rows)} | {100 * statistics.mean(r['iter_error'] for r in rows):.1f}% | "
              f"{100 * statistics.mean(r['epoch_error'] for r in rows):.1f}% | "
              f"{100 * worst['iter_error']:.1f}% (N={worst['workers']}, b={worst['batch_per_worker']}) | "
              f"{100 * spread:.0f}% |")


def repredict(args):
    tula = os.path.abspath(args.tula)
    for line in open(args.repredict):
        r = json.loads(line)
        if r.get("nodes", 1) == 1:
            prof = profile_path(args.profile_dir, r["model"], r.get("profile") == "full")
            pred_iter, pred_epoch = predict(tula, prof, r["workers"], r["batch_per_worker"], r["samples"])
        else:  # a namespace row: its link and the shared machine's speed from the profile
            prof = os.path.join(args.profile_dir, f"{r['model']}-1thread-{r['link_mbit']:g}mbit.json")
            if not os.path.exists(prof):  # rows from before profiles were kept per link speed
                prof = os.path.join(args.profile_dir, f"{r['model']}-1thread.json")
            r["relative_speed"] = shared_machine_speed(prof, r["nodes"]) if args.shared_speed else 1.0
            catalog = os.path.join(args.profile_dir, "ns-catalog.json")
            write_namespace_catalog(catalog, r["nodes"], r["link_mbit"], r.get("delay_ms", 0), r["relative_speed"])
            pred_iter, pred_epoch = predict(tula, prof, r["workers"], r["batch_per_worker"], r["samples"],
                                            nodes=r["nodes"], catalog=catalog, machine="ns-host")
        config = {k: v for k, v in r.items() if k in ("model", "workers", "nodes", "batch_per_worker", "samples",
                                                      "measured_iter_runs", "profile", "note", "link_mbit",
                                                      "delay_ms", "relative_speed")}
        config["repredicted_from"] = os.path.basename(args.repredict)
        record(args.out, config, (pred_iter, r["measured_iter_s"]), (pred_epoch, r["measured_epoch_s"]))


def main_namespaces(args):
    tula = os.path.abspath(args.tula)
    batches = [int(b) for b in args.batches.split(",")]
    pdir = args.profile_dir or tempfile.mkdtemp()
    os.makedirs(pdir, exist_ok=True)
    print("| model | hosts | link | configurations | MAPE iteration time | MAPE epoch time |")
    print("|---|---|---|---|---|---|")
    with Namespaces(args.hosts, args.link_mbit, args.delay_ms) as net:
        catalog = os.path.join(pdir, "ns-catalog.json")
        for model in args.models.split(","):
            # Compute profiled as each host runs it: one worker, one thread.
            prof = os.path.join(pdir, f"{model}-1thread-{args.link_mbit:g}mbit.json")
            subprocess.run([tula, "profile", "--model", model, "--input-shape", SHAPES[model], "--classes", "10",
                            "--quick", "--threads", "1", "--workers", str(args.hosts), "--out", prof],
                           check=True, stdout=subprocess.DEVNULL)
            speed = shared_machine_speed(prof, args.hosts) if args.shared_speed else 1.0
            net.catalog(catalog, speed)
            rows = []
            for b in batches:
                samples = b * args.hosts * (STEPS + WARMUP + 1)
                pred_iter, pred_epoch = predict(tula, prof, args.hosts, b, samples, nodes=args.hosts,
                                                catalog=catalog, machine="ns-host")
                runs = [net.measure(tula, model, b, samples) for _ in range(args.repeats)]
                meas_iter, meas_epoch = (statistics.median(r[i] for r in runs) for i in (0, 1))
                rows.append(record(args.out, {"model": model, "workers": args.hosts, "nodes": args.hosts,
                                              "batch_per_worker": b, "link_mbit": args.link_mbit,
                                              "delay_ms": args.delay_ms, "samples": samples,
                                              "relative_speed": speed,
                                              "measured_iter_runs": [r[0] for r in runs]},
                                   (pred_iter, meas_iter), (pred_epoch, meas_epoch)))
            print(f"| {model} | {args.hosts} | {args.link_mbit:g} Mb/s, {args.delay_ms:g} ms | {len(rows)} | "
                  f"{100 * statistics.mean(r['iter_error'] for r in rows):.1f}% | "
                  f"{100 * statistics.mean(r['epoch_error'] for r in rows):.1f}% |", flush=True)


if __name__ == "__main__":
    main()
