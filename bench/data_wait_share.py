#!/usr/bin/python3
"""The share of a training step spent waiting for data in `tula train` on an image folder (bench/make_image_folder.py):
per model, --steps steps at 2 workers x --batch-size, 224 x 224, the recipe's augmentation; one row per model with the
mean over steps 2.. of data_wait_s / iter_s (rank 0's), the step time and the images per second. A small model shows
a step the loader bounds, a ResNet-18 one that compute bounds.

  bench/data_wait_share.py --tula build/src/tula --folder /tmp/photos [--models small_cnn,resnet18] [--steps 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from bench_common import append_row, git_state

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", required=True)
    ap.add_argument("--folder", required=True)
    ap.add_argument("--models", default="small_cnn,resnet18")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "data_wait_share.jsonl"))
    args = ap.parse_args()
    state = git_state()
    for model in args.models.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            metrics = os.path.join(tmp, "m.jsonl")
            cmd = [args.tula, "train", "--model", model, "--dataset", "imagefolder", "--data-dir", args.folder,
                   "--image-size", "224", "--nproc", "2", "--batch-size", str(args.batch_size), "--epochs", "1",
                   "--max-steps", str(args.steps), "--no-eval", "--progress", "none", "--tensor-stats-every", "0",
                   "--metrics", metrics]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
            if out.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
            steps = [json.loads(l) for l in open(metrics) if json.loads(l).get("type") == "iter"][1:]
        row = {"model": model, "workers": 2, "batch_per_worker": args.batch_size, "image_size": 224,
               "steps": len(steps),
               "data_wait_share": statistics.mean(s["data_wait_s"] / s["iter_s"] for s in steps),
               "step_s": statistics.median(s["iter_s"] for s in steps),
               "images_per_s": statistics.median(s["samples_per_s"] for s in steps)}
        row.update(state)
        append_row(args.out, row)
        print(json.dumps(row))


if __name__ == "__main__":
    main()
