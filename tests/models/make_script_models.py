#!/usr/bin/python3
"""Writes the TorchScript modules the script-model tests load, into the directory given, with names.json: each
module's parameter and buffer names in PyTorch's order. Seeded: the same files every run.

  tests/models/make_script_models.py DIR
"""
import json
import os
import sys

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class Net(nn.Module):
    """Nested modules (a Sequential of blocks), batch norm and a classifier: names like "features.1.bn.weight"."""

    def __init__(self, channels=1, classes=10):
        super().__init__()
        self.features = nn.Sequential(Block(channels, 8), nn.MaxPool2d(2), Block(8, 16), nn.AdaptiveAvgPool2d(2))
        self.classifier = nn.Linear(16 * 4, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class TupleOut(Net):
    def forward(self, x):
        y = self.classifier(torch.flatten(self.features(x), 1))
        return y, y


class Unflattened(Net):
    def forward(self, x):
        return self.features(x)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    names = {}

    def save(name, module):
        module.save(os.path.join(out, name))
        names[name] = {"parameters": [n for n, _ in module.named_parameters()],
                       "buffers": [n for n, _ in module.named_buffers()]}

    save("net.pt", torch.jit.script(Net()))
    save("traced.pt", torch.jit.trace(Net().eval(), torch.zeros(2, 1, 28, 28)))
    save("rgb.pt", torch.jit.script(Net(channels=3)))
    save("hundred_classes.pt", torch.jit.script(Net(classes=100)))
    save("tuple.pt", torch.jit.script(TupleOut()))
    save("unflattened.pt", torch.jit.script(Unflattened()))
    save("double.pt", torch.jit.script(Net().double()))
    frozen = Net()
    for p in frozen.parameters():
        p.requires_grad_(False)
    save("frozen.pt", torch.jit.script(frozen))
    partly = Net()
    for p in partly.features.parameters():
        p.requires_grad_(False)
    save("partly_frozen.pt", torch.jit.script(partly))
    with open(os.path.join(out, "not_a_module.pt"), "w") as f:
        f.write("this is not a TorchScript archive\n")
    with open(os.path.join(out, "names.json"), "w") as f:
        json.dump(names, f, indent=1)


if __name__ == "__main__":
    main()
