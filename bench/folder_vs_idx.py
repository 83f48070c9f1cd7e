#!/usr/bin/python3
"""Fashion-MNIST from an image folder of PNG files (bench/fashion_mnist_folder.py) against the same images from the
Debian IDX files: `tula train` with the same model, epochs, batch and seeds; one row per (source, seed) with the final
test accuracy, epochs and optimizer steps. Resumable: rows already in --out are skipped.

Both sides train without augmentation (--no-augment), so the comparison is of the data path, not of two recipes: the
IDX side sees the 28 x 28 images as they are; the folder side decodes each PNG and applies the evaluation recipe at
--image-size 28 to training and test images alike (--eval-crop 1: the shorter side resized to 28 and kept whole,
which leaves these images as they are; 0.875, ImageNet's, would resize to 32 and cut the centre 28), and normalizes
with the statistics it measures from 1,000 of its files.

  bench/folder_vs_idx.py --tula build/src/tula --folder /tmp/fmnist-folder [--seeds 0,1,2] [--epochs 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))


def run(args, source, seed):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [args.tula, "train", "--model", args.model, "--nproc", "2", "--epochs", str(args.epochs),
               "--batch-size", "64", "--lr", "0.05", "--seed", str(seed), "--no-augment", "--progress", "none",
               "--tensor-stats-every", "0", "--metrics", metrics]
        if source == "folder":
            cmd += ["--dataset", "imagefolder", "--data-dir", args.folder, "--image-size", "28", "--image-channels", "1",
                    "--eval-crop", str(args.eval_crop)]
        else:
            cmd += ["--dataset", "fashion-mnist"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
        rows = [json.loads(line) for line in open(metrics)]
    epochs = [r for r in rows if r.get("type") == "epoch"]
    last = epochs[-1]
    return {"source": source, "seed": seed, "model": args.model, "eval_crop": args.eval_crop if source == "folder" else None,
            "epochs": len(epochs), "steps": last["step"],
            "test_accuracy": last["test_accuracy"], "test_loss": last["test_loss"],
            "train_s": sum(e["epoch_s"] for e in epochs), "bad_images": last.get("bad_images")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", required=True)
    ap.add_argument("--folder", required=True)
    ap.add_argument("--model", default="lenet5")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--eval-crop", type=float, default=1.0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "folder_vs_idx.jsonl"))
    args = ap.parse_args()
    done = set()
    if os.path.exists(args.out):
        for line in open(args.out):
            r = json.loads(line)
            done.add((r["source"], r["seed"], r["model"], r["epochs"], r.get("eval_crop")))
    state = git_state()
    for seed in [int(s) for s in args.seeds.split(",")]:
        for source in ("idx", "folder"):  # alternated, so a change in load falls on both
            crop = args.eval_crop if source == "folder" else None
            if (source, seed, args.model, args.epochs, crop) in done:
                continue
            row = run(args, source, seed)
            row.update(state)
            append_row(args.out, row)
            print(json.dumps(row))
    rows = [json.loads(line) for line in open(args.out)]
    for source in ("idx", "folder"):
        crop = args.eval_crop if source == "folder" else None
        acc = [r["test_accuracy"] for r in rows if r["source"] == source and r["model"] == args.model
               and r["epochs"] == args.epochs and r.get("eval_crop") == crop]
        if acc:
            spread = statistics.stdev(acc) if len(acc) > 1 else 0.0
            print(f"{source}: mean {statistics.mean(acc):.4f}, sd {spread:.4f}, min {min(acc):.4f}, max {max(acc):.4f}"
                  f" over {len(acc)} seeds")


if __name__ == "__main__":
    main()
