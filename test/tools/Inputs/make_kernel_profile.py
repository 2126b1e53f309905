"""Writes a kernel profile (runtime/KernelProfile.h's format) of made-up times, for tests of
`cairn --kernel-times`.

  make_kernel_profile.py SOURCE.cpp OUT.json --model NAME --batch B [--seconds S]
                         [--slow REGEX=SECONDS ...]

SOURCE.cpp is `cairn build --emit=cpp` of the plain build (its `s.trainKernels` table names
the kernels); each kernel takes S seconds (default 0.001) unless a --slow REGEX matches its
whole name.
"""
import argparse
import json
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=1e-3)
    ap.add_argument("--slow", action="append", default=[])
    args = ap.parse_args()
    rules = []
    for rule in args.slow:
        pattern, seconds = rule.rsplit("=", 1)
        rules.append((re.compile(pattern), float(seconds)))
    with open(args.source) as f:
        text = f.read()
    table = text[text.index("s.trainKernels = {"):]
    table = table[:table.index("};")]
    kernels = []
    for i, (name, kind, loc) in enumerate(
            re.findall(r'\{"([^"]*)", "([^"]*)", "([^"]*)"\}', table)):
        seconds = next((s for p, s in rules if p.fullmatch(name)), args.seconds)
        kernels.append({"index": i, "name": name, "kind": kind, "loc": loc, "seconds": seconds})
    if not kernels:
        print(f"{args.source}: no s.trainKernels table", file=sys.stderr)
        return 1
    profile = {"format": "cairn-kernel-profile", "version": 1, "model": args.model,
               "source": "", "batch": args.batch, "backend": "cpu", "threads": 1, "steps": 1,
               "step_seconds": sum(k["seconds"] for k in kernels), "kernels": kernels}
    with open(args.out, "w") as f:
        json.dump(profile, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
