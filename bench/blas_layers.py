#!/usr/bin/python3
"""Which of small_cnn's layers the BLAS library changes: each layer's forward
and backward at batch 128, one thread, timed in PyTorch (python3-torch, the
same LibTorch 1.13 as tula), once with Debian's reference BLAS and once with
OpenBLAS first on LD_LIBRARY_PATH, alternated by pair. The layers: small_cnn's
two 3x3 convolutions (1 -> 32 channels at 28x28, 32 -> 64 at 14x14), a
ResNet-20 3x3 convolution (16 -> 16 at 28x28) and small_cnn's hidden linear
layer (3,136 -> 128). Each row is one arm of one pair: the median of 20 timed
calls after one warm-up, per layer. Rows are appended to --out; pairs already
there are skipped.

  bench/blas_layers.py --pairs 3 --out bench/results/blas_layers.jsonl
  bench/blas_layers.py --out bench/results/blas_layers.jsonl --table
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_common import append_row, git_state, read_rows, rows_done
from blas import ARMS, library_path

LAYERS = ("conv 1->32 at 28x28", "conv 32->64 at 14x14", "conv 16->16 at 28x28", "linear 3136->128")


def time_layers():
    """In the child: each layer's median forward+backward milliseconds, as JSON on stdout."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    torch.manual_seed(0)

    def grads(*shape):
        return torch.randn(*shape, requires_grad=True)
    cases = {
        LAYERS[0]: (grads(128, 1, 28, 28), grads(32, 1, 3, 3), lambda x, w: F.conv2d(x, w, padding=1)),
        LAYERS[1]: (grads(128, 32, 14, 14), grads(64, 32, 3, 3), lambda x, w: F.conv2d(x, w, padding=1)),
        LAYERS[2]: (grads(128, 16, 28, 28), grads(16, 16, 3, 3), lambda x, w: F.conv2d(x, w, padding=1)),
        LAYERS[3]: (grads(128, 3136), grads(128, 3136), F.linear),
    }
    out = {}
    for name, (x, w, layer) in cases.items():
        samples = []
        for i in range(21):
            start = time.perf_counter()
            layer(x, w).sum().backward()
            if i > 0:
                samples.append((time.perf_counter() - start) * 1000)
        out[name] = statistics.median(samples)
    print(json.dumps(out))


def measure(args):
    done = rows_done(args.out, ("pair", "arm"))
    for pair in range(1, args.pairs + 1):
        for arm in (ARMS if pair % 2 else tuple(reversed(ARMS))):
            if (pair, arm) in done:
                continue
            env = dict(os.environ, LD_LIBRARY_PATH=library_path(arm))
            r = subprocess.run(["/usr/bin/python3", os.path.abspath(__file__), "--child"], env=env,
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise RuntimeError(f"{arm} failed: {r.stderr[-2000:]}")
            row = {"pair": pair, "arm": arm, "ms": json.loads(r.stdout.strip().splitlines()[-1]),
                   "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **git_state(short=True)}
            append_row(args.out, row)
            print(json.dumps(row), flush=True)


def table(args):
    rows = read_rows(args.out)
    by = {(r["pair"], r["arm"]): r["ms"] for r in rows}
    pairs = sorted({p for p, _ in by if all((p, a) in by for a in ARMS)})
    print(f"**{args.out}**: milliseconds, forward and backward at batch 128, one thread ({len(pairs)} pairs)\n")
    print("| layer | reference BLAS (per pair) | OpenBLAS (per pair) | median of pair ratios (OpenBLAS / reference) |")
    print("|---|---|---|---|")
    for layer in LAYERS:
        a = [by[(p, "reference")][layer] for p in pairs]
        b = [by[(p, "openblas")][layer] for p in pairs]
        ratios = [y / x for x, y in zip(a, b)]
        print(f"| {layer} | {', '.join(f'{v:.1f}' for v in a)} | {', '.join(f'{v:.1f}' for v in b)} | "
              f"{statistics.median(ratios):.3f} |")


def main():
    if "--child" in sys.argv:
        return time_layers()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--out", required=True)
    p.add_argument("--table", action="store_true", help="print the table of --out's rows and measure nothing")
    args = p.parse_args()
    return table(args) if args.table else measure(args)


if __name__ == "__main__":
    main()
