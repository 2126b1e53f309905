"""Checks `EXE predict`'s outputs of a Linear(in, out) model against its weights.

  python3 check_linear_predict.py WEIGHTS.safetensors X.npy Y.npy

Reads fc.weight [out, in] and fc.bias [out] (float32) from the safetensors file and the
float32 arrays X [N, in] and Y [N, out] with the standard library only, and checks that
Y = X fc.weight^T + fc.bias to 1e-5 (float32 sums against float64); prints the largest error.
"""
import ast
import json
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    shape = header["shape"]
    count = 1
    for d in shape:
        count *= d
    return shape, struct.unpack("<%df" % count, data[10 + length:10 + length + 4 * count])


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    length = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        tensors[name] = (info["shape"], struct.unpack("<%df" % (len(raw) // 4), raw))
    return tensors


def main():
    weights = read_safetensors(sys.argv[1])
    (out, inputs), w = weights["fc.weight"]
    _, b = weights["fc.bias"]
    (n, x_in), x = read_npy(sys.argv[2])
    y_shape, y = read_npy(sys.argv[3])
    assert x_in == inputs and tuple(y_shape) == (n, out), (x_in, y_shape)
    worst = 0.0
    for i in range(n):
        for o in range(out):
            want = b[o] + sum(w[o * inputs + k] * x[i * inputs + k] for k in range(inputs))
            worst = max(worst, abs(y[i * out + o] - want) / max(1.0, abs(want)))
    print("largest error %.3g over %d examples" % (worst, n))
    sys.exit(0 if worst <= 1e-5 else 1)


if __name__ == "__main__":
    main()
