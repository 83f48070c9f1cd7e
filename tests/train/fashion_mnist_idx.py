"""Fashion-MNIST's Debian IDX files as NumPy arrays, for the tests that train against PyTorch."""
import gzip
import os
import struct

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = struct.unpack(">" + "I" * data[3], data[4:4 + 4 * data[3]])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * data[3]).reshape(dims)


def split(prefix):
    """(images [n, 28, 28], labels [n]) of "train" or "t10k"."""
    return (read_idx(os.path.join(DATA, f"{prefix}-images-idx3-ubyte.gz")),
            read_idx(os.path.join(DATA, f"{prefix}-labels-idx1-ubyte.gz")))
