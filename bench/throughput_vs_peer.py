#!/usr/bin/python3
"""Samples/s of `tula train` against PyTorch DDP (bench/peer_ddp.py) on the same
model, per-worker batch and worker count, run alternately on this machine.
Appends one JSON line per run to the results file and prints a Markdown table.

  bench/throughput_vs_peer.py --tula build/src/tula [--repeats 2] [--out bench/results/throughput.jsonl]
      [--label NAME] [--device cuda --python PYTHON] [--classes N]

With --device cuda both sides train on the GPU in fp32 (PyTorch's defaults
on both: TF32 in cuDNN's convolutions, none in matrix products), the peer
under --python (a Python whose torch has CUDA); each row names the device.

With --peer-tula PATH the peer is another build of Tula instead of PyTorch
DDP (e.g. the commit before a refactor), run the same way, alternately.

With --label, every row carries it, and a configuration that already has a
row with that label in the results file is skipped: an interrupted run picks
up where it stopped.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_common import append_row, free_port, git_state

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = {  # model -> input shape
    "small_cnn": "1x28x28",
    "resnet18": "3x32x32",
    "resnet20": "3x32x32",
    "mobilenet_v3_small": "3x32x32",
    "resnet50": "3x224x224",  # ImageNet's shape
}



def run_tula(tula, model, shape, batch, workers, steps, warmup, device="cpu", classes=10, gpus=0, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [tula, "train", "--model", model, "--dataset", "synthetic", "--synthetic-shape", shape,
               "--synthetic-size", str(batch * workers * (steps + warmup)), "--max-steps", str(steps + warmup),
               "--synthetic-classes", str(classes), "--device", device,
               "--batch-size", str(batch), "--lr", "0.01", "--weight-decay", "5e-4", "--schedule", "constant",
               "--no-eval", "--progress", "none", "--tensor-stats-every", "0", "--metrics", metrics] + list(extra)
        if workers > 1:
            cmd += ["--nproc", str(workers), "--master-port", str(free_port())]
            if device == "cuda" and gpus < workers:  # NCCL needs a GPU per worker; Gloo shares one
                cmd += ["--backend", "gloo"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        iters = [json.loads(line) for line in open(metrics)]
        iters = [r for r in iters if r.get("type") == "iter" and r["step"] > warmup]
        samples = sum(r["global_batch"] for r in iters)
        seconds = sum(r["iter_s"] for r in iters)
        hidden = [r["comm_hidden_fraction"] for r in iters if r["comm_busy_s"] > 0]
        return samples / seconds, (statistics.mean(hidden) if hidden else None)


def run_peer(model, shape, batch, workers, steps, warmup, device="cpu", classes=10, python="/usr/bin/python3",
             extra=()):
    script = os.path.join(HERE, "peer_ddp.py")
    args = ["--model", model, "--shape", shape, "--batch-size", str(batch), "--steps", str(steps),
            "--warmup", str(warmup), "--device", device, "--classes", str(classes)] + list(extra)
    cmd = [python, script] + args
    if workers == 1:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    else:
        # Debian's torchrun fails under Python 3.11 (its Std enum lookup), so
        # the workers get torchrun's variables here, OMP_NUM_THREADS included.
        port = str(free_port())
        procs = []
        for rank in range(workers):
            env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(workers),
                       LOCAL_WORLD_SIZE=str(workers), MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                       OMP_NUM_THREADS=str(max(1, os.cpu_count() // workers)))
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
        outs = [p.communicate(timeout=600)[0] for p in procs]
        if any(p.returncode != 0 for p in procs):
            raise RuntimeError(f"peer workers failed: {[p.returncode for p in procs]}")
        out = outs[0]
    return json.loads(out.strip().splitlines()[-1])["samples_per_s"]


def gpu_facts(python):
    """The GPU both sides train on (its name, for the rows) and how many there are, as the peer's torch sees them."""
    out = subprocess.run([python, "-c", "import json, torch; print(json.dumps([torch.cuda.get_device_name(0), "
                          "torch.cuda.device_count(), torch.__version__]))"],
                         check=True, capture_output=True, text=True).stdout
    name, count, version = json.loads(out)
    return name, count, version


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tula", required=True)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batches", default="16,64,256")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--models", default=",".join(CONFIGS))
    p.add_argument("--out", default=os.path.join(HERE, "results", "throughput.jsonl"))
    p.add_argument("--peer-tula", default=None, help="compare against this tula binary instead of PyTorch DDP")
    p.add_argument("--label", default=None, help="tag the rows; skip configurations already measured under it")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--python", default="/usr/bin/python3", help="the peer's Python (its torch must have CUDA for cuda)")
    p.add_argument("--classes", type=int, default=10, help="classes of the synthetic data and the models' output")
    p.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default="fp32", help="both sides (autocast)")
    p.add_argument("--channels-last", action="store_true", help="both sides")
    p.add_argument("--tula-args", default="", help="more `tula train` arguments, e.g. \"--optimizer ags\"")
    p.add_argument("--peer-tula-args", default="", help="with --peer-tula: more arguments of the peer tula")
    args = p.parse_args()
    # Only what differs from the defaults, so a tula from before these options runs too.
    shared = (["--precision", args.precision] if args.precision != "fp32" else []) + \
        (["--channels-last"] if args.channels_last else [])
    tula_extra = shared + args.tula_args.split()
    peer_extra = shared + (args.peer_tula_args.split() if args.peer_tula else [])
    device_name, gpus, peer_torch = gpu_facts(args.python) if args.device == "cuda" else (None, 0, None)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    git_state()  # the commit the runs start at, recorded in each row
    done = {}
    if args.label and os.path.exists(args.out):
        for line in open(args.out):
            r = json.loads(line)
            if r.get("label") == args.label:
                done[(r["model"], r["batch_per_worker"], r["workers"])] = r
    rows = []
    for model in args.models.split(","):
        shape = CONFIGS[model]
        for workers in (int(w) for w in args.workers.split(",")):
            for batch in (int(b) for b in args.batches.split(",")):
                if (model, batch, workers) in done:
                    rows.append(done[(model, batch, workers)])
                    continue
                tula_runs, peer_runs, hidden_runs = [], [], []
                on = dict(device=args.device, classes=args.classes)
                for _ in range(args.repeats):  # alternate so drift hits both alike
                    t, hidden = run_tula(args.tula, model, shape, batch, workers, args.steps, args.warmup, gpus=gpus,
                                         extra=tula_extra, **on)
                    tula_runs.append(t)
                    if hidden is not None:
                        hidden_runs.append(hidden)
                    if args.peer_tula:
                        peer_runs.append(run_tula(args.peer_tula, model, shape, batch, workers, args.steps,
                                                  args.warmup, gpus=gpus, extra=peer_extra, **on)[0])
                    else:
                        peer_runs.append(run_peer(model, shape, batch, workers, args.steps, args.warmup,
                                                  python=args.python, extra=peer_extra, **on))
                row = {"model": model, "shape": shape, "batch_per_worker": batch, "workers": workers,
                       "tula_samples_per_s": statistics.median(tula_runs),
                       "peer_samples_per_s": statistics.median(peer_runs),
                       "tula_runs": tula_runs, "peer_runs": peer_runs,
                       "comm_hidden_fraction": statistics.mean(hidden_runs) if hidden_runs else None}
                if args.label:
                    row["label"] = args.label
                if args.device == "cuda":
                    row.update(device="cuda", device_name=device_name, gpus=gpus, peer_torch=peer_torch,
                               classes=args.classes, steps=args.steps, warmup=args.warmup)
                row.update(precision=args.precision, channels_last=args.channels_last)
                if args.tula_args or args.peer_tula_args:
                    row.update(tula_args=args.tula_args, peer_tula_args=args.peer_tula_args)
                if args.peer_tula:
                    row["peer"] = args.peer_tula
                # Pair by pair: each Tula run with the peer run right after it, so a
                # drift in the machine's speed hits both sides of a ratio alike.
                paired = sorted(t / p for t, p in zip(tula_runs, peer_runs))
                row["ratio"] = statistics.median(paired)
                row["ratio_min"], row["ratio_max"] = paired[0], paired[-1]
                row.update(git_state())
                rows.append(row)
                append_row(args.out, row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    peer = "peer tula" if args.peer_tula else "PyTorch DDP"
    print(f"| model | per-worker batch | workers | tula samples/s | {peer} samples/s | ratio (median of pairs) "
          "| ratio of medians | pair min-max | comm hidden |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        hidden = "-" if r["comm_hidden_fraction"] is None else f"{100 * r['comm_hidden_fraction']:.0f}%"
        print(f"| {r['model']} | {r['batch_per_worker']} | {r['workers']} | {r['tula_samples_per_s']:.0f} | "
              f"{r['peer_samples_per_s']:.0f} | {r['ratio']:.2f}x | "
              f"{r['tula_samples_per_s'] / r['peer_samples_per_s']:.2f}x | {r['ratio_min']:.2f}-{r['ratio_max']:.2f} | "
              f"{hidden} |")


if __name__ == "__main__":
    main()
