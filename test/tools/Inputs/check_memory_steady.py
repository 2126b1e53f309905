"""Memory does not grow across steps, and the measured arena stays within the plan.

    check_memory_steady.py METRICS.json [--max-growth BYTES]

Reads the --metrics of a `train --steps N` run: the resident set after the last step may
exceed the one after the 20 warm-up steps by at most BYTES (default 512 KiB; the step functions
allocate nothing, so any per-step leak over 1,000 steps shows), and the arena's measured
high-water mark is positive and at most the planned arena.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("metrics")
parser.add_argument("--max-growth", type=int, default=512 * 1024)
args = parser.parse_args()
with open(args.metrics) as f:
    m = json.load(f)
first, end = m["rss_after_warmup_bytes"], m["rss_at_end_bytes"]
if not first or not end:
    sys.exit(f"check_memory_steady: no resident-set readings in {args.metrics}")
growth = end - first
if growth > args.max_growth:
    sys.exit(f"check_memory_steady: the resident set grew by {growth} bytes over "
             f"{m['steps']} steps ({first} -> {end})")
if not 0 < m["measured_peak_bytes"] <= m["planned_arena_bytes"]:
    sys.exit(f"check_memory_steady: measured arena peak {m['measured_peak_bytes']} outside "
             f"(0, planned {m['planned_arena_bytes']}]")
print(f"{m['model']}: {m['steps']} steps, resident set {first} -> {end} bytes "
      f"(growth {growth}), arena measured {m['measured_peak_bytes']} of "
      f"{m['planned_arena_bytes']} planned: ok")
