"""Checks a memory report (cairn plan/build --memory-report FILE.json) on its own terms.

    check_memory_report.py REPORT.json [--max-ratio R] [--expect-steps train_step,forward]

A third, independent reading of the plan (besides the planner and verifyArena): from the
JSON alone it checks the schema, that every buffer lies in the arena at a 256-byte-aligned
offset, that no two buffers live at the same schedule index share a byte (except an
in-place output over the input its first kernel reads last), that persistent buffers span
the whole schedule, that the lower bound is the largest total of live bytes (and at most
the schedule's lower bound before in-place, which a memory-aware order lowered), and that
arena / lower bound <= R. Prints one summary line; exits 1 with the reason otherwise.
"""

import argparse
import json
import math
import sys

KINDS = {"param", "grad", "activation", "saved", "optimizer", "workspace", "input", "output",
         "temp", "buffer"}
PERSISTENT = {"param", "buffer", "optimizer", "input", "output"}
ALIGN = 256
DTYPE_BYTES = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2, "I32": 4, "I64": 8, "U8": 1}


def fail(message):
    print(f"check_memory_report: {message}", file=sys.stderr)
    sys.exit(1)


def aligned(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--max-ratio", type=float)
    parser.add_argument("--expect-steps")
    parser.add_argument("--max-arena", type=int,
                        help="fail when the arena is larger (a plan must never grow)")
    args = parser.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    for key in ("model", "source", "batch", "steps", "devices"):
        if key not in report:
            fail(f"missing '{key}'")
    if args.expect_steps and report["steps"] != args.expect_steps.split(","):
        fail(f"steps {report['steps']}, expected {args.expect_steps}")
    if len(report["devices"]) != 1:
        fail("expected one device")
    dev = report["devices"][0]
    for key in ("device", "arena_bytes", "lower_bound_bytes", "persistent_bytes",
                "no_reuse_bytes", "buffers", "schedule", "peak_index"):
        if key not in dev:
            fail(f"device: missing '{key}'")
    arena, schedule, buffers = dev["arena_bytes"], dev["schedule"], dev["buffers"]
    if args.max_arena is not None and arena > args.max_arena:
        fail(f"arena {arena} bytes is larger than {args.max_arena}")
    steps = len(schedule)
    if [s["index"] for s in schedule] != list(range(steps)):
        fail("schedule indices are not 0..n-1")
    for s in schedule:
        for key in ("op", "loc", "step"):
            if key not in s:
                fail(f"schedule entry {s['index']}: missing '{key}'")
    names = {}
    for b in buffers:
        for key in ("name", "kind", "dtype", "shape", "bytes", "offset", "start", "end", "loc"):
            if key not in b:
                fail(f"buffer {b.get('name')}: missing '{key}'")
        # Its bytes are its elements' (a workspace's may be rounded up).
        size = DTYPE_BYTES.get(b["dtype"])
        need = size * math.prod(b["shape"]) if size else None
        if need is None or b["bytes"] < need or (b["kind"] != "workspace" and b["bytes"] != need):
            fail(f"buffer '{b['name']}': {b['bytes']} bytes for {b['dtype']} {b['shape']}")
        if b["name"] in names:
            fail(f"buffer '{b['name']}' listed twice")
        names[b["name"]] = b
        if b["kind"] not in KINDS:
            fail(f"buffer '{b['name']}': unknown kind '{b['kind']}'")
        if b["bytes"] <= 0 or b["offset"] < 0 or b["offset"] % ALIGN:
            fail(f"buffer '{b['name']}': {b['bytes']} bytes at offset {b['offset']}")
        if b["offset"] + b["bytes"] > arena:
            fail(f"buffer '{b['name']}' ends past the {arena}-byte arena")
        if not 0 <= b["start"] <= b["end"] < steps:
            fail(f"buffer '{b['name']}': lifetime {b['start']}..{b['end']} outside the schedule")
        if b["kind"] in PERSISTENT and (b["start"], b["end"]) != (0, steps - 1):
            fail(f"persistent buffer '{b['name']}' does not span the schedule")

    # Live from `first` (an in-place output from the index after its input's last).
    def first(b):
        return b["start"] + (1 if "in_place_of" in b else 0)

    for b in buffers:
        if "in_place_of" in b:
            over = names.get(b["in_place_of"])
            if over is None or over["offset"] != b["offset"] or over["end"] != b["start"]:
                fail(f"'{b['name']}' in place of '{b['in_place_of']}' does not take over "
                     "its bytes at its last use")
    # Sweep: for each schedule index, the live buffers must not overlap in bytes.
    by_start = sorted(buffers, key=first)
    live, k = [], 0
    live_bytes = [0] * max(steps, 1)
    for t in range(steps):
        live = [b for b in live if b["end"] >= t]
        while k < len(by_start) and first(by_start[k]) <= t:
            if first(by_start[k]) <= by_start[k]["end"]:
                live.append(by_start[k])
            k += 1
        spans = sorted((b["offset"], b["offset"] + b["bytes"], b["name"]) for b in live)
        for (lo1, hi1, n1), (lo2, hi2, n2) in zip(spans, spans[1:]):
            if lo2 < hi1:
                fail(f"at schedule index {t}, '{n1}' [{lo1}, {hi1}) and '{n2}' "
                     f"[{lo2}, {hi2}) share bytes")
        live_bytes[t] = sum(aligned(b["bytes"]) for b in live)
    lower = max(live_bytes)
    if lower != dev["lower_bound_bytes"]:
        fail(f"lower bound {dev['lower_bound_bytes']} but the live bytes peak at {lower}")
    if live_bytes[dev["peak_index"]] != lower:
        fail(f"peak_index {dev['peak_index']} is not where the live bytes peak")
    persistent = sum(aligned(b["bytes"]) for b in buffers if b["kind"] in PERSISTENT)
    if persistent != dev["persistent_bytes"]:
        fail(f"persistent_bytes {dev['persistent_bytes']}, the buffers say {persistent}")
    if arena < lower:
        fail(f"arena {arena} below the lower bound {lower}")
    # The memory-aware schedule is kept only where it lowers the lower bound before in-place
    # (in-place lowers it further).
    for key in ("schedule_order", "schedule_lower_bound_before_bytes",
                "schedule_lower_bound_after_bytes"):
        if key not in dev:
            fail(f"device: missing '{key}'")
    before = dev["schedule_lower_bound_before_bytes"]
    after = dev["schedule_lower_bound_after_bytes"]
    if dev["schedule_order"] == "memory-aware" and not after < before:
        fail(f"memory-aware schedule kept, but its lower bound {after} is not below {before}")
    if dev["schedule_order"] == "as-lowered" and after != before:
        fail(f"schedule as lowered, but its lower bound went from {before} to {after}")
    if dev["schedule_order"] not in ("memory-aware", "as-lowered"):
        fail(f"unknown schedule_order '{dev['schedule_order']}'")
    if lower > after:
        fail(f"lower bound {lower} above the schedule's before in-place, {after}")
    ratio = arena / lower if lower else 1.0
    if args.max_ratio is not None and ratio > args.max_ratio:
        fail(f"arena / lower bound = {ratio:.4f} exceeds {args.max_ratio}")
    print(f"{report['model']} batch {report['batch']}: {len(buffers)} buffers, "
          f"{steps} kernels, arena {arena}, lower bound {lower}, ratio {ratio:.4f}: ok")


if __name__ == "__main__":
    main()
