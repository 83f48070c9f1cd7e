#!/usr/bin/python3
"""A photo-like image folder for timing data loaders: --images JPEG files of --width x --height in --classes class
folders (OUT/train/<class>/*.jpg, and a tenth as many in OUT/val/), seeded, written once (a folder that is already
complete is kept). Each image is a smooth random colour field (a few large blobs blurred together), lit by a gradient,
with fine noise on top: JPEG then has to code both smooth areas and detail, as in photographs, and files come out at
a photograph's size for their resolution (about 70 KB at 500 x 375, quality 90). Nothing here is stored in the
repository.

  bench/make_image_folder.py OUT [--images 5000] [--classes 100] [--width 500] [--height 375] [--seed 0]
"""
import argparse
import os

import numpy as np
from PIL import Image, ImageFilter


def image(rng, width, height):
    small = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
    field = Image.fromarray(small).resize((width, height), Image.BICUBIC).filter(ImageFilter.GaussianBlur(8))
    pixels = np.asarray(field).astype(np.float32)
    light = np.linspace(0.7, 1.2, width, dtype=np.float32)[None, :, None]
    pixels = pixels * light + rng.normal(0, 12, size=pixels.shape).astype(np.float32)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def write_split(out, count, classes, args, rng):
    done = os.path.join(out, ".complete")
    if os.path.exists(done):
        return
    for i in range(count):
        folder = os.path.join(out, f"class{i % classes:03d}")
        os.makedirs(folder, exist_ok=True)
        image(rng, args.width, args.height).save(os.path.join(folder, f"{i:06d}.jpg"), quality=90)
    open(done, "w").close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--width", type=int, default=500)
    ap.add_argument("--height", type=int, default=375)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    write_split(os.path.join(args.out, "train"), args.images, args.classes, args, rng)
    write_split(os.path.join(args.out, "val"), max(args.classes, args.images // 10), args.classes, args, rng)
    print(f"{args.out}: {args.images} training images in {args.classes} classes")


if __name__ == "__main__":
    main()
