#!/usr/bin/python3
"""Checks that the zoo's torchvision models have torchvision 0.14's sizes.

Usage: compare_torchvision.py PATH/TO/tula

Runs `tula models --json` for 3 channels / 1000 classes / 224x224 and for
1 channel / 10 classes / 28x28 (Fashion-MNIST; models whose minimum is larger
are still measured, at their minimum), builds the same models with
torchvision (replacing the first conv for other channel counts, as the zoo
does), and compares parameter counts and weight bytes (parameters plus
buffers). Prints a table; exits 1 on any mismatch or missing model.
"""
import json
import subprocess
import sys

import torch.nn as nn
import torchvision.models

TORCHVISION_MODELS = [
    "resnet18", "resnet34", "resnet50", "vgg11", "vgg11_bn", "alexnet",
    "mobilenet_v3_small", "mobilenet_v3_large",
]
CONFIGS = [(3, 1000, 224), (1, 10, 28)]


def torchvision_sizes(name, channels, classes):
    model = getattr(torchvision.models, name)(num_classes=classes)
    if channels != 3:
        path = next(p for p, m in model.named_modules() if isinstance(m, nn.Conv2d))
        parent_path, _, attr = path.rpartition(".")
        parent = model.get_submodule(parent_path)
        old = getattr(parent, attr)
        setattr(parent, attr, nn.Conv2d(channels, old.out_channels, old.kernel_size, old.stride,
                                        old.padding, dilation=old.dilation, groups=old.groups,
                                        bias=old.bias is not None))
    params = sum(t.numel() for t in model.parameters())
    weight_bytes = sum(t.numel() * t.element_size()
                       for t in list(model.parameters()) + list(model.buffers()))
    return params, weight_bytes


def tula_sizes(binary, channels, classes, image_size):
    out = subprocess.run(
        [binary, "models", "--json", "--channels", str(channels), "--classes", str(classes),
         "--image-size", str(image_size)],
        check=True, capture_output=True, text=True).stdout
    return {row["name"]: row for row in json.loads(out)}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    binary = sys.argv[1]
    failures = 0
    header = (f"{'model':<20} {'C':>2} {'K':>5} {'tula params':>12} {'torchvision':>12} "
              f"{'tula bytes':>12} {'torchvision':>12}  result")
    print(header)
    print("-" * len(header))
    for channels, classes, image_size in CONFIGS:
        rows = tula_sizes(binary, channels, classes, image_size)
        for name in TORCHVISION_MODELS:
            tv_params, tv_bytes = torchvision_sizes(name, channels, classes)
            row = rows.get(name)
            if row is None:
                print(f"{name:<20} {channels:>2} {classes:>5} {'missing':>12} {tv_params:>12} "
                      f"{'':>12} {tv_bytes:>12}  FAIL")
                failures += 1
                continue
            ok = row["parameters"] == tv_params and row["weight_bytes"] == tv_bytes
            failures += not ok
            print(f"{name:<20} {channels:>2} {classes:>5} {row['parameters']:>12} {tv_params:>12} "
                  f"{row['weight_bytes']:>12} {tv_bytes:>12}  {'ok' if ok else 'FAIL'}")
    if failures:
        print(f"{failures} mismatch(es) with torchvision {torchvision.__version__}")
        return 1
    print(f"all match torchvision {torchvision.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
