"""Writes a tiny Fashion-MNIST-shaped data set as NumPy files, with the standard library only.

  python3 write_tiny_dataset.py DIR [TRAIN] [TEST]

DIR/{train,test}_{images,labels}.npy: uint8 images [N, 28, 28] and uint8 labels [N]. Image i
has label i % 10 and a bright 7x7 square at a place that depends on its label, so a model can
learn it in a few steps.
"""
import os
import struct
import sys


def write_npy(path, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(bytes(data))


def write_split(directory, split, count):
    images, labels = bytearray(), bytearray()
    for i in range(count):
        label = i % 10
        top, left = 2 + 2 * (label // 5) * 5, 2 + 5 * (label % 5)
        for row in range(28):
            for col in range(28):
                bright = top <= row < top + 7 and left <= col < left + 7
                images.append(200 if bright else (i * 7 + row * 3 + col) % 50)
        labels.append(label)
    write_npy(os.path.join(directory, split + "_images.npy"), "|u1", (count, 28, 28), images)
    write_npy(os.path.join(directory, split + "_labels.npy"), "|u1", (count,), labels)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    write_split(directory, "train", int(sys.argv[2]) if len(sys.argv) > 2 else 256)
    write_split(directory, "test", int(sys.argv[3]) if len(sys.argv) > 3 else 100)


if __name__ == "__main__":
    main()
