"""Checks a kernel profile (`EXE train --profile F`) against the executable's C++ source.

  check_kernel_profile.py PROFILE.json SOURCE.cpp --steps N --model NAME --batch B
                          [--onednn NAME ...] [--im2col NAME ...]

The profile must list every kernel the training step enters (`ctx.profile->enter(k)` in
SOURCE, k = 0, 1, ... in order), with a name, a kind and a location, non-negative seconds,
N profiled steps, and (N = 2: each median is the mean of two rows) kernel times that add up
to the step's. Every convolution says how it ran ("implementation": "oneDNN IMPL, N images a
call" or "im2col (why)"), no other kernel does; the kernels named after --onednn ran on
oneDNN, those after --im2col on im2col.
"""
import argparse
import json
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("source")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--onednn", nargs="*", default=[])
    ap.add_argument("--im2col", nargs="*", default=[])
    args = ap.parse_args()
    with open(args.profile) as f:
        profile = json.load(f)
    with open(args.source) as f:
        source = f.read()
    train = source[source.index("static void trainStep("):source.index("static void forward(")]
    entered = [int(k) for k in re.findall(r"ctx\.profile->enter\((\d+)\)", train)]
    errors = []

    def expect(what, ok):
        if not ok:
            errors.append(what)

    expect("format", profile.get("format") == "cairn-kernel-profile")
    expect("version", profile.get("version") == 1)
    expect("model", profile.get("model") == args.model)
    expect("batch", profile.get("batch") == args.batch)
    expect("backend", profile.get("backend") == "cpu")
    expect(f"steps {profile.get('steps')} != {args.steps}", profile.get("steps") == args.steps)
    kernels = profile.get("kernels", [])
    expect(f"the step enters kernels {entered[:5]}..., not 0..{len(entered) - 1} in order",
           entered == list(range(len(entered))) and entered)
    expect(f"{len(kernels)} kernels in the profile, {len(entered)} in the step",
           len(kernels) == len(entered))
    for i, k in enumerate(kernels):
        expect(f"kernel {i}: index {k.get('index')}", k.get("index") == i)
        expect(f"kernel {i}: name", isinstance(k.get("name"), str) and k["name"])
        expect(f"kernel {i}: kind {k.get('kind')}", str(k.get("kind")).startswith("cairn.kernel."))
        expect(f"kernel {i}: loc {k.get('loc')}", re.search(r"\.cairn:\d+:\d+$", k.get("loc", "")))
        expect(f"kernel {i}: seconds {k.get('seconds')}",
               isinstance(k.get("seconds"), (int, float)) and k["seconds"] >= 0)
        conv = k.get("kind") in ("cairn.kernel.conv2d", "cairn.kernel.conv2d_grad_input",
                                 "cairn.kernel.conv2d_grad_weight")
        impl = k.get("implementation")
        if conv:
            expect(f"kernel {i} ({k.get('name')}): implementation {impl!r}",
                   isinstance(impl, str) and
                   re.fullmatch(r"oneDNN \S+, \d+ images? a call|im2col \(.+\)", impl))
        else:
            expect(f"kernel {i} ({k.get('name')}): implementation {impl!r} of no convolution",
                   impl is None)
    by_name = {k.get("name"): str(k.get("implementation")) for k in kernels}
    for name in args.onednn:
        expect(f"{name} not on oneDNN: {by_name.get(name)}",
               by_name.get(name, "").startswith("oneDNN "))
    for name in args.im2col:
        expect(f"{name} not on im2col: {by_name.get(name)}",
               by_name.get(name, "").startswith("im2col ("))
    total = sum(k.get("seconds", 0) for k in kernels)
    step = profile.get("step_seconds", -1)
    expect(f"step_seconds {step} is not positive", step > 0)
    if args.steps == 2:
        expect(f"kernels add up to {total}, the step to {step}", abs(total - step) <= 1e-9 + 1e-9 * step)
    if errors:
        print(f"{args.profile}: " + "; ".join(errors), file=sys.stderr)
        return 1
    print(f"{args.profile}: {len(kernels)} kernels, {profile['steps']} steps, "
          f"step {step * 1e3:.3f} ms: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
