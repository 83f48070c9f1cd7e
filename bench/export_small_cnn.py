#!/usr/bin/python3
"""A CNN defined in Python and saved as TorchScript, as a user brings one to Tula: two 3x3 convolutions (32, 64) with
ReLU and max pooling, a 128-wide hidden layer, 10 classes; for 1-channel 28 x 28 input (Fashion-MNIST), seeded.
--tiny: instead a model far cheaper than decoding its input (one 3x3 stride-4 convolution of RGB to 16 channels,
global average pooling, 100 classes or --classes), for showing a step that the data loader bounds.

  bench/export_small_cnn.py OUT.pt [--seed 0] [--tiny [--classes 100]]
"""
import argparse

import torch
import torch.nn as nn


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class Tiny(nn.Module):
    def __init__(self, classes=100):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, stride=4, padding=1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--classes", type=int, default=100, help="--tiny: the classes of its output")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.jit.script(Tiny(args.classes) if args.tiny else SmallCnn()).save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
