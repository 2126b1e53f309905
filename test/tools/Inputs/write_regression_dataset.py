"""Writes a linear regression data set as NumPy files, with the standard library only.

  python3 write_regression_dataset.py DIR [TRAIN] [TEST]

DIR/{train,test}_x.npy: float32 [N, 8] features in [-1, 1) from a fixed linear congruential
sequence; DIR/{train,test}_y.npy: float64 [N, 1] targets y = x . w + 0.5 with
w = (1, -2, 0.5, 0, 3, -1, 0.25, 2), exactly linear, so a Linear(8, 1) can fit them to
float32 rounding (float64 targets: the runtime converts them to the model's float32).
"""
import os
import struct
import sys

WEIGHTS = (1.0, -2.0, 0.5, 0.0, 3.0, -1.0, 0.25, 2.0)
BIAS = 0.5


def write_npy(path, descr, fmt, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def write_split(directory, split, count, state):
    xs, ys = [], []
    for _ in range(count):
        row = []
        for _ in WEIGHTS:
            state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
            # A float32 value, so that the target is exact for the features as stored.
            row.append(struct.unpack("<f", struct.pack("<f", (state >> 11) / 2**53 * 2 - 1))[0])
        xs += row
        ys.append(sum(w * x for w, x in zip(WEIGHTS, row)) + BIAS)
    write_npy(os.path.join(directory, split + "_x.npy"), "<f4", "f", (count, len(WEIGHTS)), xs)
    write_npy(os.path.join(directory, split + "_y.npy"), "<f8", "d", (count, 1), ys)
    return state


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    state = write_split(directory, "train", int(sys.argv[2]) if len(sys.argv) > 2 else 256, 1)
    write_split(directory, "test", int(sys.argv[3]) if len(sys.argv) > 3 else 64, state)


if __name__ == "__main__":
    main()
