#!/usr/bin/python3
"""Compares and inspects Cairn checkpoints (safetensors) without torch.

  check_checkpoint.py same A B                      every tensor of A is in B with the same bytes,
                                                    and B's others (optimizer state) are zeros
  check_checkpoint.py differ A B NAME...            these tensors differ between A and B
  check_checkpoint.py metadata F KEY=VALUE...       F's metadata has these entries
Exits 1 with what differs."""
import json
import struct
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    metadata = header.pop("__metadata__", {})
    body = data[8 + size:]
    tensors = {name: body[t["data_offsets"][0]:t["data_offsets"][1]] for name, t in header.items()}
    return tensors, metadata


def main(argv):
    command, rest = argv[1], argv[2:]
    if command == "same":
        a, b = load(rest[0])[0], load(rest[1])[0]
        bad = [n for n in a if a[n] != b.get(n)]
        bad += [n for n in b if n not in a and any(b[n])]
        if bad:
            sys.exit(f"{rest[0]} and {rest[1]} differ in {bad}")
        print(f"{len(b)} tensors the same")
    elif command == "differ":
        a, b = load(rest[0])[0], load(rest[1])[0]
        same = [n for n in rest[2:] if a[n] == b[n]]
        if same:
            sys.exit(f"{rest[0]} and {rest[1]} agree on {same}")
        print(f"{len(rest) - 2} tensors differ")
    elif command == "metadata":
        metadata = load(rest[0])[1]
        for entry in rest[1:]:
            key, value = entry.split("=", 1)
            if metadata.get(key) != value:
                sys.exit(f"{rest[0]}: metadata {key} is {metadata.get(key)!r}, expected {value!r}"
                         f" (all: {metadata})")
        print("metadata as expected")
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv)
