"""Recomputation changes nothing but memory: for each model, the recomputing build, the same
build run with --poison, and a `--no-recompute` build give bit-identical results.

    check_recompute_bit_identical.py --cairn CAIRN --work DIR [--steps N] [--batch N]
        [--budgets 0.5,0.33] [--no-regions] [--precision f16|bf16] [--same-arena-ok]
        MODEL.cairn...

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

--budgets F,...: also builds with `--memory-budget` at each fraction F of the --no-recompute
arena (or, where `cairn plan` exits 2 at that budget, at the smallest arena it says
recomputation reaches), checks that the plan fits it and that the build recomputes, and
trains it (and with --poison) to the same bits. --no-regions: the models need not have
regions (the budget alone recomputes). --precision: every build and plan in that precision
(an f16 step scales its loss and commits the running statistics at its end).
--same-arena-ok: the recomputing builds must copy kernels and agree bit for bit, but their
arena may equal the reference's (a peak recomputation cannot lower: half precision's float32
working copies on the CPU).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_budget  # noqa: E402
import write_tiny_dataset  # noqa: E402
from check_plan_bit_identical import compare, run  # noqa: E402


def train_step_arena(cairn, model_file, *flags):
    """The train_step arena in bytes, from `cairn plan --step train`."""
    device, _ = memory_budget.plan(cairn, model_file, "--step", "train", *flags)
    if device is None:
        sys.exit(f"{model_file}: cairn plan --step train {' '.join(flags)} does not fit")
    return device["arena_bytes"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cairn", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int)
    parser.add_argument("--budgets", default="")
    parser.add_argument("--no-regions", action="store_true")
    parser.add_argument("--precision")
    parser.add_argument("--same-arena-ok", action="store_true")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    for model_file in args.models:
        model = os.path.splitext(os.path.basename(model_file))[0]
        work = os.path.join(args.work, model)
        os.makedirs(work, exist_ok=True)
        batch = ["--batch", str(args.batch)] if args.batch else []
        if args.precision:
            batch += ["--precision", args.precision]
        builds = []  # (name, flags)
        if not args.no_regions:
            builds.append(("recompute", []))
        for fraction in [float(f) for f in args.budgets.split(",") if f]:
            budget = memory_budget.budget_at(args.cairn, model_file, fraction, *batch)
            fits, _ = memory_budget.plan(args.cairn, model_file, *batch, "--memory-budget",
                                         str(budget))
            if fits is None:
                sys.exit(f"{model}: --memory-budget {budget}, the smallest arena cairn "
                         f"said it reaches, does not fit")
            if fits["arena_bytes"] > budget:
                sys.exit(f"{model}: --memory-budget {budget} planned an arena of "
                         f"{fits['arena_bytes']}")
            builds.append((f"budget-{fraction:g}", ["--memory-budget", str(budget)]))
        exe, ref = os.path.join(work, model), os.path.join(work, model + "-ref")
        arenas = {}
        for name, flags in builds:
            ir = run([args.cairn, "build", model_file, *batch, *flags, "--emit=mlir",
                      "--stop-after", "recompute", "-o", "-"])
            recomputed = ir.count("cairn.before_first_use")
            arenas[name] = (train_step_arena(args.cairn, model_file, *batch, *flags),
                            recomputed)
        reference_arena = train_step_arena(args.cairn, model_file, *batch, "--no-recompute")
        for name, (arena, recomputed) in arenas.items():
            # A budget under what recomputation reaches may leave a model as it is (the
            # MLP's arena is its weights): then nothing may be copied and nothing change.
            if recomputed == 0 and name != "recompute" and arena == reference_arena:
                continue
            if recomputed == 0:
                sys.exit(f"{model}: {name}: the recompute stage copied no kernel: nothing is "
                         f"recomputed")
            if arena > reference_arena or (arena == reference_arena and not args.same_arena_ok):
                sys.exit(f"{model}: {name}: the train_step arena ({arena} bytes) is not below "
                         f"the --no-recompute one ({reference_arena})")
        for name, flags in builds:
            run([args.cairn, "build", model_file, *batch, *flags, "-o", f"{exe}-{name}"])
        run([args.cairn, "build", model_file, *batch, "--no-recompute", "-o", ref])
        data = os.path.join(work, "data")
        os.makedirs(data, exist_ok=True)
        shape = write_tiny_dataset.image_shape(model_file) or (1, 28, 28)
        write_tiny_dataset.write_split(data, "train", 512, shape)
        write_tiny_dataset.write_split(data, "test", 32, shape)
        init = os.path.join(work, "init.safetensors")
        run([ref, "init", "--seed", "3", "--save", init])
        results = {}
        runs = [("no-recompute", [ref])]
        for name, _ in builds:
            runs += [(name, [f"{exe}-{name}"]), (name + " --poison", [f"{exe}-{name}", "--poison"])]
        for name, cmd in runs:
            out = os.path.join(work, f"{name.replace(' ', '')}.safetensors")
            metrics = os.path.join(work, f"{name.replace(' ', '')}.json")
            run([cmd[0], "train", "--data", data, "--steps", str(args.steps), "--seed", "5",
                 "--load", init, "--save", out, "--metrics", metrics] + cmd[1:])
            with open(metrics) as f:
                results[name] = (out, json.load(f))
        reference_out, reference = results["no-recompute"]
        for name, _ in runs[1:]:
            out, metrics = results[name]
            compare(model, name, reference_out, out, "the --no-recompute run")
            for key in ("final_loss", "test_loss", "test_accuracy"):
                if metrics[key] != reference[key]:
                    sys.exit(f"{model}: {name}: {key} {metrics[key]!r} differs from the "
                             f"--no-recompute run's {reference[key]!r}")
        done = ", ".join(f"{name} ({copied} kernels copied, train_step arena {arena} bytes)"
                         for name, (arena, copied) in arenas.items())
        print(f"{model}: {done}, each also with --poison, agree bit for bit with "
              f"--no-recompute (train_step arena {reference_arena} bytes) after {args.steps} "
              f"steps; final loss {reference['final_loss']!r}")


if __name__ == "__main__":
    main()
