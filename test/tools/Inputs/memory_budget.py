"""`cairn plan` under --memory-budget, read by the scripts that need it (the recompute checks,
bench/recompute, scripts/gpu-bundle.sh): one reader of the plan report and of the message of
exit code 2, with the standard library only.

    memory_budget.py --cairn CAIRN MODEL.cairn FRACTION [cairn plan flags...]
        prints budget_at(...): the --memory-budget in bytes for FRACTION of the plain arena.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def plan(cairn, model_file, *flags):
    """`cairn plan MODEL --memory-report` with `flags`: (device 0 of its report, None), or
    (None, the smallest arena recomputation reaches) where it exits 2 over --memory-budget.
    Exits on any other failure."""
    with tempfile.TemporaryDirectory() as work:
        report = os.path.join(work, "report.json")
        result = subprocess.run([cairn, "plan", model_file, "--memory-report", report, *flags],
                                capture_output=True, text=True)
        if result.returncode == 2:
            reached = re.search(r"recomputation reaches is .* \((\d+) bytes\)", result.stderr)
            if not reached:
                sys.exit(f"cairn plan exited 2 without the smallest arena:\n{result.stderr}")
            return None, int(reached.group(1))
        if result.returncode != 0:
            sys.exit(f"cairn plan {model_file} {' '.join(flags)} failed "
                     f"({result.returncode}):\n{result.stdout}{result.stderr}")
        with open(report) as f:
            return json.load(f)["devices"][0], None


def budget_at(cairn, model_file, fraction, *flags):
    """The --memory-budget that is `fraction` of the model's --no-recompute arena, or, where
    no choice fits that, the smallest arena recomputation reaches."""
    plain, _ = plan(cairn, model_file, *flags, "--no-recompute")
    budget = int(plain["arena_bytes"] * fraction)
    fits, reached = plan(cairn, model_file, *flags, "--memory-budget", str(budget))
    return budget if fits else reached


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cairn", required=True)
    parser.add_argument("model")
    parser.add_argument("fraction", type=float)
    args, flags = parser.parse_known_args()
    print(budget_at(args.cairn, args.model, args.fraction, *flags))


if __name__ == "__main__":
    main()
