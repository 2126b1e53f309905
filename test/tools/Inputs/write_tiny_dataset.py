"""Writes a tiny Fashion-MNIST-shaped data set as NumPy files, with the standard library only.

  python3 write_tiny_dataset.py DIR [TRAIN] [TEST] [C,H,W]

DIR/{train,test}_{images,labels}.npy: uint8 images [N, 28, 28] (or [N, C, H, W] when C,H,W is
given, H and W at least 20, every channel alike) and uint8 labels [N]. Image i
has label i % 10 and a bright 7x7 square at a place that depends on its label, so a model can
learn it in a few steps.
"""
import os
import re
import struct
import sys


def image_shape(model_file):
    """(C, H, W) of the model's `input image: T[B, C, H, W]`, (1, 28, 28) for another rank;
    None when the file declares no `input image`."""
    with open(model_file) as f:
        image = re.search(r"input\s+image\s*:\s*\w+\[\s*\w+\s*,([^\]]*)\]", f.read())
    if not image:
        return None
    dims = [int(d) for d in image.group(1).split(",")]
    return tuple(dims) if len(dims) == 3 else (1, 28, 28)


def write_npy(path, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(bytes(data))


def write_split(directory, split, count, shape=None):
    channels, height, width = shape or (1, 28, 28)
    images, labels = bytearray(), bytearray()
    for i in range(count):
        label = i % 10
        top, left = 2 + 2 * (label // 5) * 5, 2 + 5 * (label % 5)
        for _ in range(channels):
            for row in range(height):
                for col in range(width):
                    bright = top <= row < top + 7 and left <= col < left + 7
                    images.append(200 if bright else (i * 7 + row * 3 + col) % 50)
        labels.append(label)
    dims = (count, channels, height, width) if shape else (count, 28, 28)
    write_npy(os.path.join(directory, split + "_images.npy"), "|u1", dims, images)
    write_npy(os.path.join(directory, split + "_labels.npy"), "|u1", (count,), labels)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    shape = tuple(int(d) for d in sys.argv[4].split(",")) if len(sys.argv) > 4 else None
    write_split(directory, "train", int(sys.argv[2]) if len(sys.argv) > 2 else 256, shape)
    write_split(directory, "test", int(sys.argv[3]) if len(sys.argv) > 3 else 100, shape)


if __name__ == "__main__":
    main()
