"""The memory plan changes nothing but memory: for each model, a normal build, the same build
run with --poison, and a --no-reuse build give bit-identical results.

    check_plan_bit_identical.py --cairn CAIRN --work DIR [--batch N] [--steps N] [--no-fuse]
        MODEL.cairn...

For each model: builds EXE (planned arena) and EXE-noreuse (`cairn build --no-reuse`), writes
initial weights once, then trains on a tiny data set shaped like the model's image input
(write_tiny_dataset.py: 64 training and 32 test examples) --steps steps from them three ways (EXE, EXE --poison,
EXE-noreuse), each ending with an evaluation on the test split (the forward step). The saved
weights and optimizer state must be equal byte for byte, and so must the final loss, test
loss and test accuracy. --poison overwrites every buffer with 0xFF (NaN) when its lifetime
ends, so a plan that let two live buffers share bytes, or a kernel that read a buffer before
writing it, would change the results. Exits 1 naming the first difference.

--no-fuse: also builds EXE-nofuse (`cairn build --no-fuse`: every element-wise kernel alone)
and trains it to the same bits, so a fused chain (a dropout's mask drawn in the chain's loop
included) computes what its kernels did.
"""

import argparse
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import write_tiny_dataset  # noqa: E402


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check_plan_bit_identical: {' '.join(cmd)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result.stdout


def read_safetensors(path):
    """{name: (dtype, shape, bytes)} from a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], tuple(info["shape"]), body[begin:end])
    return tensors


def write_tiny_data(model, model_file, work):
    """work/data: 64 training and 32 test examples shaped like the model's image input."""
    shape = write_tiny_dataset.image_shape(model_file)
    if not shape:
        sys.exit(f"{model}: no `input image: T[B, ...]` line in {model_file}")
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    write_tiny_dataset.write_split(data, "train", 64, shape)
    write_tiny_dataset.write_split(data, "test", 32, shape)
    return data


def compare(model, what, reference, other, reference_name="the normal run"):
    ref, got = read_safetensors(reference), read_safetensors(other)
    if ref.keys() != got.keys():
        sys.exit(f"{model}: {what}: tensor names differ: {sorted(ref.keys() ^ got.keys())}")
    for name in sorted(ref):
        if ref[name] != got[name]:
            sys.exit(f"{model}: {what}: tensor '{name}' differs from {reference_name}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cairn", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--no-fuse", action="store_true")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for model_file in args.models:
        model = os.path.splitext(os.path.basename(model_file))[0]
        work = os.path.join(args.work, model)
        os.makedirs(work, exist_ok=True)
        exe, noreuse = os.path.join(work, model), os.path.join(work, model + "-noreuse")
        report = os.path.join(work, "plan.json")
        run([args.cairn, "build", model_file, "--batch", str(args.batch), "-o", exe,
             "--memory-report", report])
        run([args.cairn, "build", model_file, "--batch", str(args.batch), "--no-reuse", "-o",
             noreuse])
        others = [("no-reuse", [noreuse])]
        if args.no_fuse:
            nofuse = os.path.join(work, model + "-nofuse")
            run([args.cairn, "build", model_file, "--batch", str(args.batch), "--no-fuse", "-o",
                 nofuse])
            others.append(("no-fuse", [nofuse]))
        with open(report) as f:
            device = json.load(f)["devices"][0]
        # The check means something only where the plan does share bytes.
        if device["arena_bytes"] >= device["no_reuse_bytes"]:
            sys.exit(f"{model}: the planned arena ({device['arena_bytes']}) is not below the "
                     f"no-reuse one ({device['no_reuse_bytes']}): nothing is shared")
        data = write_tiny_data(model, model_file, work)
        init = os.path.join(work, "init.safetensors")
        run([exe, "init", "--seed", "3", "--save", init])
        results = {}
        for name, cmd in [("normal", [exe]), ("poison", [exe, "--poison"])] + others:
            out = os.path.join(work, f"{name}.safetensors")
            metrics = os.path.join(work, f"{name}.json")
            command = [cmd[0], "train", "--data", data, "--steps", str(args.steps),
                       "--seed", "5", "--load", init, "--save", out, "--metrics", metrics]
            run(command + cmd[1:])
            with open(metrics) as f:
                results[name] = (out, json.load(f))
        reference_out, reference = results["normal"]
        for name in ["poison"] + [other for other, _ in others]:
            out, metrics = results[name]
            compare(model, name, reference_out, out)
            for key in ("final_loss", "test_loss", "test_accuracy"):
                if metrics[key] != reference[key]:
                    sys.exit(f"{model}: {name}: {key} {metrics[key]!r} differs from the normal "
                             f"run's {reference[key]!r}")
        print(f"{model}: normal, --poison, {' and '.join('--' + o for o, _ in others)} agree bit "
              f"for bit after {args.steps} "
              f"steps (arena {device['arena_bytes']} bytes, no reuse "
              f"{device['no_reuse_bytes']}, final loss {reference['final_loss']!r})")


if __name__ == "__main__":
    main()
