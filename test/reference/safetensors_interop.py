#!/usr/bin/env python3
"""Safetensors interop between PyTorch and Cairn's runtime, with no `safetensors`
package: the format is written and read by hand from torch tensors' bytes.

  --write PATH   write the expected tensors in the reference layout
  --check PATH   check a file written by Cairn: layout and every tensor's bytes
Exits 77 (skip) when torch is missing.
"""
import argparse
import json
import struct
import sys

try:
    import torch
except ImportError:
    print("torch is not installed; skipping", file=sys.stderr)
    sys.exit(77)

METADATA = {"format": "pt"}


def expected():
    return {
        "fc1.weight": torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 - 1,
        "fc1.bias": torch.tensor([0.25, -0.5, 1e-3], dtype=torch.float32),
        "bn.num_batches_tracked": torch.tensor(1234567890123, dtype=torch.int64),
        "ids": torch.tensor([-3, 0, 7, 2**40, -2**62], dtype=torch.int64),
        "d": torch.tensor([3.141592653589793, -2.5], dtype=torch.float64),
        "h": torch.tensor([[1, -2], [0.5, 65504]], dtype=torch.float16),
        "b": torch.tensor([1, -3.5, 256], dtype=torch.bfloat16),
        "n": torch.tensor([-7, 2**31 - 1], dtype=torch.int32),
        "pix": torch.tensor([0, 1, 128, 255], dtype=torch.uint8),
        "empty": torch.zeros(0, 4, dtype=torch.float32),
    }


DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
          torch.bfloat16: "BF16", torch.int32: "I32", torch.int64: "I64", torch.uint8: "U8"}


def raw(t):
    # Little-endian C-order bytes; the view works for bf16, which numpy lacks.
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def write(path):
    tensors = expected()
    # The reference implementation orders by alignment (largest first), then name.
    names = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header, offset = {"__metadata__": METADATA}, 0
    for name in names:
        t = tensors[name]
        size = t.numel() * t.element_size()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(raw(tensors[n]) for n in names))


def check(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    text = data[8:8 + n]
    errors = []
    if n % 8 or not text.startswith(b"{") or text.rstrip(b" ") != text.rstrip():
        errors.append("header must start with '{', be padded with spaces to 8 bytes")
    header = json.loads(text)
    meta = header.pop("__metadata__", {})
    if meta.get("format") != "pt":
        errors.append(f"metadata {meta} lost 'format': 'pt'")
    buffer = data[8 + n:]
    exp = expected()
    if sorted(header) != sorted(exp):
        errors.append(f"tensor names {sorted(header)} != {sorted(exp)}")
    offset = 0
    for name in sorted(header):  # Cairn writes in name order, contiguously.
        info = header[name]
        begin, end = info["data_offsets"]
        if begin != offset:
            errors.append(f"{name}: starts at {begin}, expected {offset}")
        offset = end
        t = exp.get(name)
        if t is None:
            continue
        if info["dtype"] != DTYPES[t.dtype] or info["shape"] != list(t.shape):
            errors.append(f"{name}: {info['dtype']} {info['shape']} != "
                          f"{DTYPES[t.dtype]} {list(t.shape)}")
            continue
        got = buffer[begin:end]
        if got != raw(t):
            errors.append(f"{name}: bytes differ")
        elif t.numel():
            back = torch.frombuffer(bytearray(got), dtype=t.dtype).reshape(t.shape)
            if not torch.equal(back, t):
                errors.append(f"{name}: values differ")
    if offset != len(buffer):
        errors.append(f"tensors cover {offset} bytes of a {len(buffer)}-byte buffer")
    for e in errors:
        print(f"{path}: {e}", file=sys.stderr)
    return 1 if errors else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--write")
    parser.add_argument("--check")
    args = parser.parse_args()
    if args.write:
        write(args.write)
    if args.check:
        return check(args.check)
    return 0


if __name__ == "__main__":
    sys.exit(main())
