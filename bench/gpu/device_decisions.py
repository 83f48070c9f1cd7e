#!/usr/bin/python3
"""The GPU profile's predictions against `tula train` on the same GPU (issue
78, part 6): for one model's profile taken with `tula profile --device cuda`,

  heldout  the step time `tula predict` gives at batches the profile did not
           measure, against the median step `tula train --device cuda`
           measures there (steps after --skip);
  oom      the largest batch `tula predict` says fits one GPU, against the
           real out-of-memory point, found by bisection with 2-step runs of
           `tula train` (a run that fails saying "out of memory" does not fit).

One JSON row per comparison is appended to --out; a Markdown line per row
is printed. Nothing here is timed by the script itself: the step times are
the engine's own metrics (iter_s).

  bench/gpu/device_decisions.py heldout --tula T --profile P --model resnet18 --shape 3x32x32 \
      --classes 10 --batches 24,48,96 --out rows.jsonl
  bench/gpu/device_decisions.py oom --tula T --profile P --model resnet50 --shape 3x224x224 \
      --classes 1000 --tries 5 --out rows.jsonl
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(argv, timeout):
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or "") if isinstance(e.stdout, str) else ""


def predict(args, batch):
    rc, out = run([args.tula, "predict", "--profile", args.profile, "--workers", "1", "--batch-size", str(batch),
                   "--split-to-fit", "--json"], 60)
    if rc != 0:
        raise SystemExit(f"tula predict failed at batch {batch}:\n{out}")
    return json.loads(out)


def train(args, batch, steps, metrics):
    argv = [args.tula, "train", "--device", "cuda", "--model", args.model, "--dataset", "synthetic",
            "--synthetic-shape", args.shape, "--synthetic-classes", str(args.classes),
            "--synthetic-size", str(max(batch * (steps + 1), 1024)), "--batch-size", str(batch),
            "--max-steps", str(steps), "--no-eval", "--progress", "none"]
    if metrics:
        argv += ["--metrics", metrics]
    return run(argv, args.timeout)


def append(path, row):
    with open(path, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")


def heldout(args):
    measured_batches = {s["batch_per_worker"] for s in json.load(open(args.profile))["samples"]["compute"]}
    for b in (int(x) for x in args.batches.split(",")):
        if b in measured_batches:
            raise SystemExit(f"batch {b} was measured by the profile: not held out")
        p = predict(args, b)
        with tempfile.TemporaryDirectory() as tmp:
            metrics = os.path.join(tmp, "m.jsonl")
            rc, out = train(args, b, args.steps, metrics)
            if rc != 0:
                row = {"check": "heldout", "model": args.model, "batch": b, "error": out[-2000:]}
                append(args.out, row)
                print(f"| {args.model} | {b} | train failed (exit {rc}) |")
                continue
            steps = [json.loads(line) for line in open(metrics) if '"iter_s"' in line]
        times = [s["iter_s"] for s in steps if s.get("step", 0) > args.skip and s.get("iter_s")]
        measured = statistics.median(times)
        est = p["iteration_s"]["estimate"]
        row = {"check": "heldout", "model": args.model, "shape": args.shape, "batch": b, "profile": args.profile,
               "predicted_s": est, "predicted_lo": p["iteration_s"]["lo"], "predicted_hi": p["iteration_s"]["hi"],
               "measured_median_s": measured, "measured_steps": len(times), "error": est / measured - 1}
        append(args.out, row)
        print(f"| {args.model} | {b} | {est * 1e3:.2f} ms | {measured * 1e3:.2f} ms | {100 * (est / measured - 1):+.1f}% |")


def fits(args, batch):
    rc, out = train(args, batch, 2, None)
    if rc == 0:
        return True
    if "out of memory" in out.lower():
        return False
    raise SystemExit(f"tula train failed at batch {batch} for another reason than memory (exit {rc}):\n{out[-2000:]}")


def oom(args):
    predicted = predict(args, 1)["max_batch_per_worker"]
    tries = []
    lo, hi = 0, 0  # largest known to fit, smallest known not to
    b = predicted
    for _ in range(args.tries):
        ok = fits(args, b)
        tries.append({"batch": b, "fits": ok})
        if ok:
            lo = b
            b = b * 5 // 4 if hi == 0 else (lo + hi) // 2
        else:
            hi = b
            b = max(1, b * 4 // 5) if lo == 0 else (lo + hi) // 2
        if lo and hi and hi - lo <= max(1, lo // 50):
            break
    row = {"check": "oom", "model": args.model, "shape": args.shape, "profile": args.profile,
           "predicted_max_batch": predicted, "largest_fit_found": lo, "smallest_failure_found": hi, "tries": tries}
    if lo and hi:
        row["error"] = predicted / ((lo + hi) / 2) - 1
    append(args.out, row)
    print(f"| {args.model} | predicted {predicted} | fits {lo or '?'} | fails {hi or 'none found'} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=("heldout", "oom"))
    p.add_argument("--tula", required=True)
    p.add_argument("--profile", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--shape", required=True)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--batches", default="24,48,96")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--skip", type=int, default=5, help="steps left out of the median (warm-up, cuDNN autotuning)")
    p.add_argument("--tries", type=int, default=5)
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    (heldout if args.what == "heldout" else oom)(args)


if __name__ == "__main__":
    sys.exit(main())
