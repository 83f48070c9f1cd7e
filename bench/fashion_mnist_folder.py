#!/usr/bin/python3
"""Fashion-MNIST as an image folder: the Debian IDX files written out as torchvision's ImageFolder layout,
OUT/train/<class>/<index>.png and OUT/val/<class>/<index>.png (the test set as val/), 8-bit grayscale PNG, lossless,
so that training on the folder and on the IDX files sees the same pixels. Class folders are named 0_t-shirt ...
9_ankle-boot so that their sorted order is the label order. Skips a folder that is already complete.

  bench/fashion_mnist_folder.py OUT [--format png|jpeg] [--data /usr/share/datasets/fashion-mnist]
"""
import argparse
import gzip
import os
import struct

import numpy as np
from PIL import Image

CLASSES = ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle-boot"]


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = struct.unpack(">" + "I" * data[3], data[4:4 + 4 * data[3]])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * data[3]).reshape(dims)


def write_split(images, labels, out, fmt):
    done = os.path.join(out, ".complete")
    if os.path.exists(done):
        return
    for c, name in enumerate(CLASSES):
        os.makedirs(os.path.join(out, f"{c}_{name}"), exist_ok=True)
    ext = "png" if fmt == "png" else "jpg"
    for i, (image, label) in enumerate(zip(images, labels)):
        path = os.path.join(out, f"{label}_{CLASSES[label]}", f"{i:05d}.{ext}")
        if fmt == "png":
            Image.fromarray(image, mode="L").save(path, optimize=False)
        else:
            Image.fromarray(image, mode="L").save(path, quality=95)
    open(done, "w").close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--format", choices=["png", "jpeg"], default="png")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = ap.parse_args()
    for split, prefix in (("train", "train"), ("val", "t10k")):
        images = read_idx(os.path.join(args.data, f"{prefix}-images-idx3-ubyte.gz"))
        labels = read_idx(os.path.join(args.data, f"{prefix}-labels-idx1-ubyte.gz"))
        write_split(images, labels, os.path.join(args.out, split), args.format)
        print(f"{split}: {len(labels)} images in {os.path.join(args.out, split)}")


if __name__ == "__main__":
    main()
