"""Recomputation changes nothing but memory: for each model, the recomputing build, the same
build run with --poison, and a `--no-recompute` build give bit-identical results.

    check_recompute_bit_identical.py --cairn CAIRN --work DIR [--steps N] MODEL.cairn...

For each model (which has `checkpoint { }` regions): builds EXE (regions recomputed) and
EXE-ref (`cairn build --no-recompute`), checks that the recomputing build does recompute
(kernels marked cairn.before_first_use after the recompute stage) and that its train_step
arena is below the reference's, writes initial weights once, then trains on a tiny data set
(write_tiny_dataset.py: 512 training and 32 test examples) --steps steps from them three ways
(EXE, EXE --poison, EXE-ref), each ending with an evaluation on the test split. The saved
weights, running statistics and optimizer state must be equal byte for byte, and so must the
final loss, test loss and test accuracy: a recomputed dropout that drew another mask, a batch
norm whose running statistics were updated twice, or a recomputed value read after the plan
reused its bytes (--poison) would change them. Exits 1 naming the first difference.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import write_tiny_dataset  # noqa: E402
from check_plan_bit_identical import compare, run  # noqa: E402


def train_step_arena(cairn, model_file, *flags):
    """The train_step arena in bytes, from `cairn plan --step train --memory-report`."""
    report = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"recompute-{os.getpid()}.json")
    run([cairn, "plan", model_file, "--step", "train", "--memory-report", report, *flags])
    with open(report) as f:
        arena = json.load(f)["devices"][0]["arena_bytes"]
    os.remove(report)
    return arena


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cairn", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for model_file in args.models:
        model = os.path.splitext(os.path.basename(model_file))[0]
        work = os.path.join(args.work, model)
        os.makedirs(work, exist_ok=True)
        ir = run([args.cairn, "build", model_file, "--emit=mlir", "--stop-after", "recompute",
                  "-o", "-"])
        recomputed = ir.count("cairn.before_first_use")
        if recomputed == 0:
            sys.exit(f"{model}: the recompute stage copied no kernel: nothing is recomputed")
        arena = train_step_arena(args.cairn, model_file)
        reference_arena = train_step_arena(args.cairn, model_file, "--no-recompute")
        if arena >= reference_arena:
            sys.exit(f"{model}: recomputing, the train_step arena ({arena} bytes) is not below "
                     f"the --no-recompute one ({reference_arena})")
        exe, ref = os.path.join(work, model), os.path.join(work, model + "-ref")
        run([args.cairn, "build", model_file, "-o", exe])
        run([args.cairn, "build", model_file, "--no-recompute", "-o", ref])
        data = os.path.join(work, "data")
        os.makedirs(data, exist_ok=True)
        write_tiny_dataset.write_split(data, "train", 512, (1, 28, 28))
        write_tiny_dataset.write_split(data, "test", 32, (1, 28, 28))
        init = os.path.join(work, "init.safetensors")
        run([exe, "init", "--seed", "3", "--save", init])
        results = {}
        for name, cmd in (("recompute", [exe]), ("poison", [exe, "--poison"]),
                          ("no-recompute", [ref])):
            out = os.path.join(work, f"{name}.safetensors")
            metrics = os.path.join(work, f"{name}.json")
            run([cmd[0], "train", "--data", data, "--steps", str(args.steps), "--seed", "5",
                 "--load", init, "--save", out, "--metrics", metrics] + cmd[1:])
            with open(metrics) as f:
                results[name] = (out, json.load(f))
        reference_out, reference = results["no-recompute"]
        for name in ("recompute", "poison"):
            out, metrics = results[name]
            compare(model, name, reference_out, out, "the --no-recompute run")
            for key in ("final_loss", "test_loss", "test_accuracy"):
                if metrics[key] != reference[key]:
                    sys.exit(f"{model}: {name}: {key} {metrics[key]!r} differs from the "
                             f"--no-recompute run's {reference[key]!r}")
        print(f"{model}: recomputing ({recomputed} kernels copied), with --poison and "
              f"--no-recompute agree bit for bit after {args.steps} steps (train_step arena "
              f"{arena} bytes, {reference_arena} without recomputation; final loss "
              f"{reference['final_loss']!r})")


if __name__ == "__main__":
    main()
