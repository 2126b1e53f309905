"""Checks that two safetensors files hold the same tensors, bit for bit.

    compare_checkpoints.py A.safetensors B.safetensors
    compare_checkpoints.py --drop NAME IN.safetensors OUT.safetensors
    compare_checkpoints.py --npy A.npy B.npy
    compare_checkpoints.py --metrics A.json B.json KEY...

Without torch: the header is JSON after its 8-byte length. Same names, dtypes,
shapes, bytes and metadata, or a message naming what differs and exit 1.
--drop writes IN without tensor NAME (a checkpoint a device lacks a tensor of);
--npy compares two .npy files byte for byte past their headers; --metrics
compares the values of KEY in two metrics files.
"""
import json
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + size])
    data = blob[8 + size:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[begin:end])
    return tensors, metadata


def write(path, tensors, metadata):
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name in sorted(tensors):
        dtype, shape, data = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def fail(message):
    print("compare_checkpoints: " + message, file=sys.stderr)
    sys.exit(1)


def main(args):
    if args[0] == "--drop":
        name, source, target = args[1:4]
        tensors, metadata = read(source)
        if name not in tensors:
            fail(f"{source} has no tensor '{name}'")
        del tensors[name]
        write(target, tensors, metadata)
        return
    if args[0] == "--npy":
        blobs = []
        for path in args[1:3]:
            with open(path, "rb") as f:
                blob = f.read()
            (size,) = struct.unpack("<H", blob[8:10])
            blobs.append((blob[10:10 + size], blob[10 + size:]))
        if blobs[0] != blobs[1]:
            fail(f"{args[1]} and {args[2]} differ")
        print(f"{args[1]} and {args[2]}: the same {len(blobs[0][1])} bytes of outputs")
        return
    if args[0] == "--metrics":
        a, b = (json.load(open(path)) for path in args[1:3])
        for key in args[3:]:
            if a.get(key) is None or a.get(key) != b.get(key):
                fail(f"{key}: {a.get(key)} in {args[1]}, {b.get(key)} in {args[2]}")
        print(f"{args[1]} and {args[2]}: the same {', '.join(args[3:])}")
        return
    (a, ma), (b, mb) = read(args[0]), read(args[1])
    if sorted(a) != sorted(b):
        fail(f"tensors differ: {sorted(a)} in {args[0]}, {sorted(b)} in {args[1]}")
    for name in a:
        if a[name][:2] != b[name][:2]:
            fail(f"'{name}' is {a[name][:2]} in {args[0]}, {b[name][:2]} in {args[1]}")
        if a[name][2] != b[name][2]:
            fail(f"'{name}' has other bytes in {args[0]} than in {args[1]}")
    if ma != mb:
        fail(f"metadata differs: {ma} in {args[0]}, {mb} in {args[1]}")
    print(f"{args[0]} and {args[1]}: the same {len(a)} tensors, bit for bit ({ma})")


if __name__ == "__main__":
    main(sys.argv[1:])
