#!/usr/bin/python3
"""The data path alone, Tula's image-folder loader against torchvision's ImageFolder + DataLoader (PIL), on the same
folder (bench/make_image_folder.py), the same recipe (decode, RandomResizedCrop(224), horizontal flip, to float,
normalize, batches of 64) and the same number of cores: Tula with T decoding threads (bench/loader_bench.cpp, one
intra-op thread), torchvision with T worker processes (num_workers=T, one thread each). Pairs alternate Tula,
torchvision, so a change in the machine's load falls on both; one row per run to --out (resumable: a run already
there is skipped). The files are read once before the first pair, so both sides find them in the page cache.

  bench/loader_speed.py --bench build/bench/tula_loader_bench --folder /tmp/photos [--threads 1,2] [--pairs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))

PEER = r"""
import json, sys, time, torch, torchvision.transforms as T
from torchvision.datasets import ImageFolder
folder, threads, batch, batches, warmup, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
torch.set_num_threads(1)
recipe = T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
data = ImageFolder(folder + "/train", transform=recipe)
g = torch.Generator(); g.manual_seed(0)
loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True, num_workers=threads, generator=g,
                                     worker_init_fn=lambda _: torch.set_num_threads(1), prefetch_factor=2)
it = iter(loader)
for _ in range(warmup): next(it)
start = time.perf_counter(); images = 0
for _ in range(batches):
    x, y = next(it); images += len(y)
seconds = time.perf_counter() - start
print(json.dumps({"images": images, "seconds": seconds, "images_per_s": images / seconds, "threads": threads,
                  "image_size": size, "batch_size": batch}))
"""


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def warm_page_cache(folder):
    for root, _, files in os.walk(folder):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="tula_loader_bench")
    ap.add_argument("--folder", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--image-size", type=int, default=224)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "loader_speed.jsonl"))
    args = ap.parse_args()
    done = set()
    if os.path.exists(args.out):
        for line in open(args.out):
            r = json.loads(line)
            done.add((r["loader"], r["threads"], r["pair"]))
    state = git_state()
    warm_page_cache(args.folder)
    common = [str(args.batch_size), str(args.batches), str(args.warmup), str(args.image_size)]
    for threads in [int(t) for t in args.threads.split(",")]:
        for pair in range(args.pairs):
            for loader in ("tula", "torchvision"):
                if (loader, threads, pair) in done:
                    continue
                if loader == "tula":
                    row = run([args.bench, "--data-dir", args.folder, "--threads", str(threads), "--batch-size",
                               str(args.batch_size), "--batches", str(args.batches), "--warmup", str(args.warmup),
                               "--image-size", str(args.image_size), "--seed", str(pair)])
                else:
                    row = run([sys.executable, "-c", PEER, args.folder, str(threads)] + common)
                row.update({"loader": loader, "pair": pair, "folder": args.folder}, **state)
                append_row(args.out, row)
                print(json.dumps(row), flush=True)
    rows = [json.loads(line) for line in open(args.out)]
    print("| threads | Tula images/s | torchvision images/s | ratio of medians | median of pair ratios (range) |")
    print("|---|---|---|---|---|")
    for threads in sorted({r["threads"] for r in rows}):
        tula = {r["pair"]: r["images_per_s"] for r in rows if r["threads"] == threads and r["loader"] == "tula"}
        peer = {r["pair"]: r["images_per_s"] for r in rows if r["threads"] == threads and r["loader"] == "torchvision"}
        pairs = sorted(set(tula) & set(peer))
        if not pairs:
            continue
        ratios = [tula[p] / peer[p] for p in pairs]
        mt, mp = statistics.median(tula.values()), statistics.median(peer.values())
        print(f"| {threads} | {mt:.0f} | {mp:.0f} | {mt / mp:.2f} | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    main()
