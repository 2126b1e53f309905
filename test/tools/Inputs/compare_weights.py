"""Two safetensors files hold the same tensors to within a relative tolerance.

    compare_weights.py --rtol R [--atol A] A.safetensors B.safetensors

Every tensor of A is in B with the same dtype and shape, and |a - b| <= R * max(|a|, |b|) + A
element by element (float32 tensors; integer tensors must be equal). Exits 1 naming the worst
tensor otherwise.
"""

import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_plan_bit_identical import read_safetensors  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--atol", type=float, default=1e-6)
    parser.add_argument("a")
    parser.add_argument("b")
    args = parser.parse_args()
    a, b = read_safetensors(args.a), read_safetensors(args.b)
    if a.keys() != b.keys():
        sys.exit(f"tensor names differ: {sorted(a.keys() ^ b.keys())}")
    for name in sorted(a):
        (dtype, shape, x), (dtype_b, shape_b, y) = a[name], b[name]
        if (dtype, shape) != (dtype_b, shape_b):
            sys.exit(f"'{name}': {dtype}{list(shape)} against {dtype_b}{list(shape_b)}")
        if dtype != "F32":
            if x != y:
                sys.exit(f"'{name}' ({dtype}) differs")
            continue
        count = len(x) // 4
        xs, ys = struct.unpack(f"<{count}f", x), struct.unpack(f"<{count}f", y)
        for i, (u, v) in enumerate(zip(xs, ys)):
            if abs(u - v) > args.rtol * max(abs(u), abs(v)) + args.atol:
                sys.exit(f"'{name}'[{i}]: {u!r} against {v!r} (rtol {args.rtol}, "
                         f"atol {args.atol})")
    print(f"{len(a)} tensors agree to rtol {args.rtol}, atol {args.atol}")


if __name__ == "__main__":
    main()
