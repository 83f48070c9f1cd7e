#!/usr/bin/python3
"""A TorchScript model through `tula train` and back to Python:

1. `tula train --nproc 2 --model m.pt --export trained.pt` on Fashion-MNIST (a model with batch norm, so buffers
   travel too); PyTorch loads trained.pt, reads the normalization from its extra file tula.json, evaluates the test
   set itself and must find the accuracy Tula reported (at most 2 of 10,000 images apart: float sums in another
   order may flip an image whose two top logits tie to the last bit).
2. Checkpoint and resume: the same run stopped at step 100 and resumed from its checkpoint to step 150 gives the
   losses of steps 101-150 of the straight run exactly (same sample order, same weights, same optimizer state).

  tests/train/script_model_round_trip.py --tula build/src/tula [--out ROW.jsonl]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

from fashion_mnist_idx import split



class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))




def train(args, model, tmp, name, extra):
    metrics = os.path.join(tmp, name + ".jsonl")
    cmd = [args.tula, "train", "--model", model, "--dataset", "fashion-mnist", "--nproc", "2", "--threads", "1",
           "--batch-size", "64", "--epochs", "1", "--lr", "0.05", "--seed", "1", "--progress", "none",
           "--tensor-stats-every", "0", "--metrics", metrics] + extra
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        sys.exit(f"tula train failed ({run.returncode}): {' '.join(cmd)}\n{run.stdout}\n{run.stderr}")
    return [json.loads(line) for line in open(metrics)], run.stdout + run.stderr


def python_accuracy(path):
    extra = {"tula.json": ""}
    model = torch.jit.load(path, _extra_files=extra)
    info = json.loads(extra["tula.json"])
    mean = torch.tensor(info["normalize"]["mean"]).view(1, -1, 1, 1)
    std = torch.tensor(info["normalize"]["std"]).view(1, -1, 1, 1)
    images, labels = split("t10k")
    correct = 0
    with torch.no_grad():
        for i in range(0, len(labels), 1000):
            x = torch.from_numpy(images[i:i + 1000].astype(np.float32)).div_(255.0).unsqueeze(1)
            correct += int((model((x - mean) / std).argmax(1).numpy() == labels[i:i + 1000]).sum())
    return correct, len(labels), info, model.training


def losses(rows, first, last):
    return [r["loss"] for r in rows if r.get("type") == "iter" and first <= r["step"] <= last]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tula", required=True)
    ap.add_argument("--out", help="append the result as one JSON row")
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "net.pt")
        torch.manual_seed(0)
        torch.jit.script(Net()).save(model)
        exported = os.path.join(tmp, "trained.pt")
        rows, log = train(args, model, tmp, "straight", ["--max-steps", "150", "--eval-every", "150",
                                                        "--export", exported])
        evals = [r for r in rows if r.get("type") == "eval"]
        if not evals:
            sys.exit("tula recorded no evaluation at step 150")
        tula_accuracy = evals[-1]["test_accuracy"]
        correct, total, info, training = python_accuracy(exported)
        if "exported the trained model to " + exported not in log:
            failures.append("tula did not say where it exported the model")
        if training:
            failures.append("the exported module is in training mode")
        if info["input"] != {"channels": 1, "height": 28, "width": 28, "scale": "0-1"} or info["classes"] != 10:
            failures.append(f"tula.json describes the input wrongly: {info}")
        apart = abs(correct - round(tula_accuracy * total))
        if apart > 2:
            failures.append(f"PyTorch finds {correct}/{total} correct on the exported model, Tula reported "
                            f"{tula_accuracy:.4f}")

        checkpoints = os.path.join(tmp, "checkpoints")
        train(args, model, tmp, "first", ["--max-steps", "100", "--checkpoint-dir", checkpoints, "--no-eval"])
        resumed, _ = train(args, model, tmp, "resumed", ["--max-steps", "150", "--checkpoint-dir", checkpoints,
                                                          "--resume", "--no-eval"])
        straight, again = losses(rows, 101, 150), losses(resumed, 101, 150)
        if len(again) != 50 or straight != again:
            diff = max((abs(a - b) for a, b in zip(straight, again)), default=float("nan"))
            failures.append(f"resumed losses differ from the straight run's: {len(again)} steps, max diff {diff}")
    row = {"tula_accuracy": tula_accuracy, "python_correct": correct, "test_images": total,
           "python_accuracy": correct / total, "images_apart": apart, "steps": 150,
           "resume_identical": not any("resumed" in f for f in failures)}
    print(json.dumps(row))
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(row) + "\n")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
