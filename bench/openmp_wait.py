#!/usr/bin/python3
"""One worker's training step under two `tula` builds (A: before OpenMP's spinning was cut short, B: after), run
alternately, on a quiet machine and beside one busy process (`yes > /dev/null`, which takes one core). Per model,
condition and pair: the median iteration time of `tula train --nproc 1` over --steps steps (the first three left
out), on Fashion-MNIST from memory, so no loader is involved. One row per run; rows already in --out (same model,
condition, pair, side and commit) are skipped.

  bench/openmp_wait.py --a BEFORE/build/src/tula --b build/src/tula [--pairs 3] [--steps 40]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import append_row, git_state, rows_done

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = [("lenet5", 16), ("small_cnn", 64), ("resnet20", 128)]


def median_iteration(tula, model, batch, steps):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)  # each build's own choice
    env.pop("GOMP_SPINCOUNT", None)
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        out = subprocess.run([tula, "train", "--model", model, "--dataset", "fashion-mnist", "--nproc", "1",
                              "--batch-size", str(batch), "--epochs", "1", "--max-steps", str(steps), "--no-eval",
                              "--progress", "none", "--tensor-stats-every", "0", "--metrics", metrics],
                             capture_output=True, text=True, timeout=1800, env=env)
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        iters = [r for r in map(json.loads, open(metrics)) if r.get("type") == "iter"][3:]
    return statistics.median(r["iter_s"] for r in iters)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="tula before (the library's default wait)")
    ap.add_argument("--b", required=True, help="tula after (spinning cut short)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "openmp_wait.jsonl"))
    args = ap.parse_args()
    state = git_state()
    done = rows_done(args.out, ("model", "condition", "pair", "side", "commit"))
    for condition in ("quiet", "one busy process"):
        hog = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if condition != "quiet" else None
        try:
            for model, batch in MODELS:
                for pair in range(args.pairs):
                    # Alternate which side goes first, so a drift in the machine's speed falls on both.
                    sides = [("a", args.a), ("b", args.b)] if pair % 2 == 0 else [("b", args.b), ("a", args.a)]
                    for side, tula in sides:
                        if (model, condition, pair, side, state["commit"]) in done:
                            continue
                        row = {"model": model, "batch": batch, "condition": condition, "pair": pair, "side": side,
                               "binary": tula, "median_iteration_s": median_iteration(tula, model, batch, args.steps),
                               "steps_timed": args.steps - 3}
                        row.update(state)
                        append_row(args.out, row)
                        print(json.dumps(row), flush=True)
        finally:
            if hog:
                hog.kill()
                hog.wait()


if __name__ == "__main__":
    main()
