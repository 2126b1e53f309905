"""Recomputation under a memory budget: Cairn against PyTorch 2.x, same models, same machine.

  bench.py run [--models M ...] [--batches N ...] [--fractions F,...] [--out FILE.md]
               [--no-torch] [--kernel-times]
      Run by bench/recompute/run.sh in its virtual environment (PyTorch from PyPI). For each
      model (examples/M.cairn) and batch:
      - Cairn, plain: `cairn plan --no-recompute --memory-report` (the arena) and the smallest
        arena recomputation reaches (`cairn plan --memory-budget 1` exits 2 and says it).
        Budgets: each fraction F of the plain arena that is above that smallest arena, and the
        smallest itself (and, where that makes fewer than three, the points a half and a
        quarter of the way down from the plain arena to the smallest). For each: `cairn plan --memory-budget B --memory-report` gives the
        arena, the extra FLOPs and their share of the step, and its wall time is the
        planner's time (the whole command: elaboration, autodiff, the choice with the exact
        planner in the loop); `cairn build --memory-budget B` makes an executable whose step
        time is measured by `EXE train --steps W+N --profile F` on a data set of random
        images of the model's shape: the median over the steps (all but the first) of the
        time the step's kernels take, the fastest of --repeats. The plain build
        (`--no-recompute`) is timed in the same way, right before and after each budget's
        build is timed, so a ratio compares neighbours in time. (A median of profiled steps
        is steadier on a shared machine than the difference of two runs' total seconds, as
        bench/cpu_step times.) With --kernel-times, each
        budget is also chosen with `--kernel-times` from the plain build's own profile
        (`EXE train --profile`, on the same data): rows "..., measured times".
      - PyTorch (`bench.py torch`, a child process per configuration, this interpreter):
        the twin in test/reference/pytorch_models.py with the model file's optimizer, on
        random batches of the same shape, at the machine's thread count:
          plain: eager, no recomputation;
          sqrt: eager, the model cut into about sqrt(L) segments of its L layers (the
            sequence below), each but the last under torch.utils.checkpoint
            (use_reentrant=False), Chen et al.'s square-root checkpointing;
          budget F: torch.compile(model) with torch._functorch.config.activation_memory_budget
            = F (the min-cut partitioner's knapsack), F the same fractions as Cairn's.
        Memory as in bench/memory: every allocation and free of c10's CPU allocator during one
        training step (after warm-up steps) from the profiler (profile_memory=True), in time
        order; the peak of their running sum plus the bytes live when the step starts (the
        parameters, the buffers, the optimizer state and the batch; gradients are freed by
        zero_grad(set_to_none=True) before it). Step time: the fastest of --repeats means over N steps after W warm-ups.
      The report sets each PyTorch configuration against the cheapest Cairn budget whose
      arena is at most PyTorch's peak: both as a step-time overhead against their own plain.
  bench.py torch --model M --batch N --mode plain|sqrt|budget [--budget F] ...
      One PyTorch configuration; prints one JSON object.
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import ROOT, commit, cpu_name  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "tools", "Inputs"))
import memory_budget  # noqa: E402
import write_tiny_dataset  # noqa: E402

MiB = 1 << 20
# Steps per timing (warm-up, timed) by model: resnet18's CPU step takes seconds.
STEPS = {"resnet18": (1, 2), "transformer": (3, 12), "deep_mlp": (3, 12)}
DEFAULT_FRACTIONS = "0.75,0.5,0.4,0.33,0.25"


# ----------------------------------------------------------------------------- PyTorch side

def torch_segments(model, name):
    """The model's forward as a list of functions applied in turn, for square-root
    checkpointing: its layers (deep_mlp: Linear+ReLU; resnet18: the stem, each BasicBlock,
    the head; transformer: the embedding, each encoder layer, the head)."""
    import torch
    import torch.nn.functional as F
    if name == "deep_mlp":
        first = [lambda x: torch.flatten(x, 1)]
        hidden = [lambda x, layer=layer: F.relu(layer(x)) for layer in model.layers[:-1]]
        return first + hidden + [model.layers[-1]]
    if name == "resnet18":
        blocks = [b for layer in (model.layer1, model.layer2, model.layer3, model.layer4)
                  for b in layer]
        return ([lambda x: F.relu(model.bn1(model.conv1(x)))] + blocks +
                [lambda x: model.fc(torch.flatten(model.avgpool(x), 1))])
    if name == "transformer":
        embed = [lambda x: model.embed(x.reshape(x.shape[0], model.seq, 28)) + model.pos_embed]
        return embed + list(model.layers) + [lambda x: model.head(model.norm(x.mean(dim=1)))]
    raise SystemExit(f"bench.py: no segments for {name}")


def torch_run(args):
    import torch
    import torch.nn.functional as F
    import torch._functorch.config as functorch_config
    from torch.profiler import ProfilerActivity, profile
    from torch.utils.checkpoint import checkpoint
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_model_and_optimizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model, in_shape, opt = make_model_and_optimizer(args.model, os.path.join(ROOT, "examples"))
    x = torch.rand(args.batch, *in_shape)
    y = torch.randint(0, 10, (args.batch,))
    result = {"model": args.model, "batch": args.batch, "mode": args.mode}
    if args.mode == "plain":
        forward = model
    elif args.mode == "sqrt":
        segments = torch_segments(model, args.model)
        size = max(1, round(len(segments) / math.sqrt(len(segments))))
        groups = [segments[i:i + size] for i in range(0, len(segments), size)]
        result["segments"] = len(groups)

        def forward(h):
            for k, group in enumerate(groups):
                def run(t, group=group):
                    for f in group:
                        t = f(t)
                    return t
                h = run(h) if k == len(groups) - 1 else checkpoint(run, h, use_reentrant=False)
            return h
    else:
        functorch_config.activation_memory_budget = args.budget
        result["budget"] = args.budget
        forward = torch.compile(model)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()

    started = time.perf_counter()
    step()  # torch.compile compiles here
    result["first_step_seconds"] = time.perf_counter() - started
    for _ in range(args.warmup):
        step()
    opt.zero_grad(set_to_none=True)
    # Bytes live as the measured step starts: parameters, buffers, optimizer state, the batch.
    tensors = list(model.parameters()) + list(model.buffers()) + [x, y]
    for state in opt.state.values():
        tensors += [v for v in state.values() if torch.is_tensor(v)]
    live = sum(t.untyped_storage().nbytes() for t in {id(t): t for t in tensors}.values())
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
                    if e.name() == "[memory]" and e.device_type().name == "CPU")
    running = peak = 0
    for _, nbytes in events:
        running += nbytes
        peak = max(peak, running)
    result["start_bytes"] = live
    result["peak_bytes"] = live + peak
    result["net_bytes"] = running  # what the step leaves allocated (0 in a steady state)
    best = None
    for _ in range(args.repeats):
        started = time.perf_counter()
        for _ in range(args.steps):
            step()
        elapsed = (time.perf_counter() - started) / args.steps
        best = elapsed if best is None else min(best, elapsed)
    result["ms_per_step"] = best * 1000
    print(json.dumps(result))


def torch_measure(args, model, batch, mode, budget=None):
    warmup, steps = STEPS[model]
    cmd = [sys.executable, os.path.abspath(__file__), "torch", "--model", model, "--batch",
           str(batch), "--mode", mode, "--threads", str(args.threads), "--warmup", str(warmup),
           "--steps", str(steps), "--repeats", str(args.repeats)]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(args.work, "inductor"))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"mode": mode, "budget": budget, "error": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------- Cairn side

def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        raise SystemExit(f"bench.py: {' '.join(cmd)} failed ({out.returncode}):\n"
                         f"{out.stdout}{out.stderr}")
    return out


def cairn_plan(args, model_file, batch, *flags):
    """(report's device 0, wall seconds) of `cairn plan`, or (None, smallest reachable arena)
    where it exits 2 over --memory-budget (memory_budget.plan)."""
    started = time.perf_counter()
    device, smallest = memory_budget.plan(args.cairn, model_file, "--batch", str(batch), *flags)
    seconds = time.perf_counter() - started
    return (device, seconds) if device is not None else (None, smallest)


def write_dataset(directory, shape, count):
    os.makedirs(directory, exist_ok=True)
    write_tiny_dataset.write_split(directory, "train", count, shape)
    write_tiny_dataset.write_split(directory, "test", 16, shape)


def cairn_step_ms(args, exe, data, model):
    """ms per step of EXE: the median step of `train --steps W+N --profile` (each step's
    kernel time, all steps but the first), fastest of --repeats."""
    warmup, steps = STEPS[model]
    best = None
    for _ in range(args.repeats):
        profile = exe + ".timing.json"
        run([exe, "train", "--data", data, "--steps", str(warmup + steps), "--profile",
             profile])
        with open(profile) as f:
            kernels = json.load(f)
        ms = kernels["step_seconds"] * 1000
        # The copies the backward computes again, each its median time.
        copies_ms = 1000 * sum(k["seconds"] for k in kernels["kernels"]
                               if ".recomputed" in k["name"])
        if best is None or ms < best[0]:
            best = (ms, copies_ms)
    return best


def cairn_configs(args, model, batch):
    """Cairn's rows for one model and batch: plain, then each budget."""
    model_file = os.path.join(ROOT, "examples", model + ".cairn")
    shape = write_tiny_dataset.image_shape(model_file) or (1, 28, 28)
    warmup, steps = STEPS[model]
    data = os.path.join(args.work, f"data-{model}-{batch}")
    write_dataset(data, shape, batch * (warmup + steps))
    plain, plain_seconds = cairn_plan(args, model_file, batch, "--no-recompute")
    _, smallest = cairn_plan(args, model_file, batch, "--memory-budget", "1")
    budgets = {int(plain["arena_bytes"] * f) for f in args.fractions}
    budgets = {b for b in budgets if b > smallest} | {smallest}
    if len(budgets) < 3:  # the fractions skip the curve (deep_mlp: weights are most of it)
        budgets |= {int(smallest + (plain["arena_bytes"] - smallest) * f) for f in (0.5, 0.25)}
    budgets = sorted(budgets, reverse=True)
    exe_plain = os.path.join(args.work, f"{model}-{batch}-plain")
    run([args.cairn, "build", model_file, "--batch", str(batch), "--no-recompute", "-o",
         exe_plain])
    rows = []
    plain_ms = [cairn_step_ms(args, exe_plain, data, model)[0]]
    rows.append({"config": "plain", "arena_bytes": plain["arena_bytes"], "extra_flops": 0,
                 "step_flops": None, "plan_seconds": plain_seconds,
                 "ms_per_step": plain_ms[0], "copies_ms": 0.0})
    # Each budget priced by the roofline model, and with --kernel-times by the plain build's
    # own profile (`EXE train --profile`) on the same data.
    pricings = [("", [])]
    if args.kernel_times:
        profile = exe_plain + ".profile.json"
        run([exe_plain, "train", "--data", data, "--steps", str(warmup + steps), "--profile",
             profile])
        pricings.append((", measured times", ["--kernel-times", profile]))
    seen = {("", plain["arena_bytes"])}
    for budget, (label, flags) in [(b, p) for b in budgets for p in pricings]:
        device, seconds = cairn_plan(args, model_file, batch, "--memory-budget", str(budget),
                                     *flags)
        if device is None or (label, device["arena_bytes"]) in seen:
            continue
        seen.add((label, device["arena_bytes"]))
        recompute = device.get("recompute", {})
        exe = os.path.join(args.work, f"{model}-{batch}-{budget}{'-measured' if flags else ''}")
        run([args.cairn, "build", model_file, "--batch", str(batch), "--memory-budget",
             str(budget), *flags, "-o", exe])
        ms, copies_ms = cairn_step_ms(args, exe, data, model)
        plain_ms.append(cairn_step_ms(args, exe_plain, data, model)[0])
        rows.append({"config": f"budget {budget / MiB:.2f} MiB{label}", "budget_bytes": budget,
                     "arena_bytes": device["arena_bytes"],
                     "extra_flops": recompute.get("extra_flops", 0),
                     "step_flops": recompute.get("step_flops"),
                     "recomputed_kernels": recompute.get("kernels", 0),
                     "plan_seconds": seconds, "ms_per_step": ms, "copies_ms": copies_ms,
                     "plain_ms_neighbour": min(plain_ms[-2:])})
    for row in rows:
        reference = row.get("plain_ms_neighbour", min(plain_ms))
        row["overhead"] = row["ms_per_step"] / reference - 1
        row["copies_share"] = row["copies_ms"] / reference
    rows[0]["overhead"] = 0.0
    rows[0]["copies_share"] = 0.0
    return rows


# ----------------------------------------------------------------------------------- report

def fmt_mib(b):
    return f"{b / MiB:.2f}"


def report(args, results, started):
    lines = [f"# Recomputation under a memory budget: Cairn against PyTorch {results['torch']}",
             "",
             f"- command: `{args.command}`",
             f"- date: {started:%Y-%m-%d %H:%M} UTC, {time.time() - started.timestamp():.0f} s",
             f"- commit: {commit()}",
             f"- machine: {cpu_name()}, {os.cpu_count()} cores; {args.threads} threads for both",
             "- Cairn: arena of the training step's plan (bytes, exact); step ms: the median "
             "step of `EXE train --profile` (the step's kernels; every step but the first), "
             "fastest of the repeats; overhead: step time "
             "against the plain build timed next to it; copies: the recomputed kernels' "
             "median times in that profile, the overhead measured kernel by kernel (steadier "
             "than the difference of two step times on a shared machine); FLOPs: the recomputed kernels' extra "
             "FLOPs as a share of the step's; plan: wall time of `cairn plan --memory-budget`.",
             "- PyTorch: peak bytes live in the CPU allocator during one step (profiler, "
             "as bench/memory); overhead against eager plain. sqrt: torch.utils.checkpoint "
             "over about sqrt(L) segments; budget F: torch.compile with "
             "activation_memory_budget = F (its first step, the compile, not timed).",
             "- vs: each PyTorch row against the cheapest Cairn row whose arena is at most "
             "PyTorch's peak (memory: PyTorch peak / Cairn arena; overhead: Cairn's).",
             ""]
    lines += ["## Summary", ""]
    for entry in results["runs"].values():
        cairn = entry["cairn"]
        plain, smallest = cairn[0], min(cairn, key=lambda r: r["arena_bytes"])
        line = (f"- {entry['model']}, batch {entry['batch']}: plain {fmt_mib(plain['arena_bytes'])}"
                f" MiB; smallest {fmt_mib(smallest['arena_bytes'])} MiB "
                f"({plain['arena_bytes'] / smallest['arena_bytes']:.2f}x) at "
                f"{smallest['overhead']:+.1%} step time")
        for goal in (2, 2.5, 3.0):
            rows = [r for r in cairn if r["arena_bytes"] * goal <= plain["arena_bytes"]]
            if rows:
                best = min(rows, key=lambda r: r.get("copies_share", r["overhead"]))
                line += (f"; at 1/{goal:g} or less: copies {best['copies_share']:+.1%} of the "
                         f"plain step, step time {best['overhead']:+.1%} "
                         f"({fmt_mib(best['arena_bytes'])} MiB, {best['config']})")
        lines.append(line)
    lines.append("")
    for key, entry in results["runs"].items():
        model, batch = entry["model"], entry["batch"]
        cairn = entry["cairn"]
        plain = cairn[0]
        lines += [f"## {model}, batch {batch}", "",
                  "| Cairn | arena MiB | / plain | extra FLOPs | step ms | overhead | "
                  "copies ms | copies / plain step | plan s |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in cairn:
            share = (f"{row['extra_flops'] / row['step_flops']:+.1%}" if row.get("step_flops")
                     else "0")
            lines.append(f"| {row['config']} | {fmt_mib(row['arena_bytes'])} | "
                         f"{plain['arena_bytes'] / row['arena_bytes']:.2f}x | {share} | "
                         f"{row['ms_per_step']:.1f} | {row['overhead']:+.1%} | "
                         f"{row['copies_ms']:.1f} | {row['copies_share']:+.1%} | "
                         f"{row['plan_seconds']:.2f} |")
        torch_rows = entry.get("torch", [])
        if torch_rows:
            eager = next((r for r in torch_rows if r.get("mode") == "plain" and "error" not in r),
                         None)
            lines += ["", "| PyTorch | peak MiB | step ms | overhead | vs Cairn row | "
                      "memory vs | Cairn overhead |", "|---|---:|---:|---:|---|---:|---:|"]
            for r in torch_rows:
                name = r["mode"] + (f" {r['budget']:g}" if r.get("budget") is not None else "")
                if r["mode"] == "sqrt" and "segments" in r:
                    name += f" ({r['segments']} segments)"
                if "error" in r:
                    lines.append(f"| {name} | failed: {' '.join(r['error'])} | | | | | |")
                    continue
                overhead = (f"{r['ms_per_step'] / eager['ms_per_step'] - 1:+.1%}"
                            if eager else "")
                fits = [c for c in cairn if c["arena_bytes"] <= r["peak_bytes"]]
                best = min(fits, key=lambda c: c["overhead"]) if fits else None
                versus = (f"| {best['config']} | {r['peak_bytes'] / best['arena_bytes']:.2f}x | "
                          f"{best['overhead']:+.1%} |" if best else "| none fits | | |")
                lines.append(f"| {name} | {fmt_mib(r['peak_bytes'])} | {r['ms_per_step']:.1f} | "
                             f"{overhead} {versus}")
        lines.append("")
    return "\n".join(lines)


def main_run(args):
    import torch
    started = datetime.datetime.utcnow()
    args.fractions = [float(f) for f in args.fractions.split(",") if f]
    args.work = tempfile.mkdtemp(prefix="cairn-recompute-")
    results = {"torch": torch.__version__, "runs": {}}
    date = started.strftime("%Y-%m-%d")
    out = args.out or os.path.join(ROOT, "bench", "results", f"recompute-{date}.md")
    for model in args.models:
        for batch in args.batches:
            print(f"bench/recompute: {model} batch {batch}", file=sys.stderr, flush=True)
            entry = {"model": model, "batch": batch}
            # Interleaved: PyTorch's plain between Cairn's timings and its other rows.
            torch_rows = [] if args.no_torch else [torch_measure(args, model, batch, "plain")]
            entry["cairn"] = cairn_configs(args, model, batch)
            if not args.no_torch:
                torch_rows.append(torch_measure(args, model, batch, "sqrt"))
                for fraction in args.fractions:
                    torch_rows.append(torch_measure(args, model, batch, "budget", fraction))
            entry["torch"] = torch_rows
            results["runs"][f"{model}-{batch}"] = entry
            with open(os.path.splitext(out)[0] + ".json", "w") as f:
                json.dump(dict(results, command=args.command, date=str(started),
                               commit=commit(), cpu=cpu_name()), f, indent=1)
            with open(out, "w") as f:
                f.write(report(args, results, started))
    print(f"bench/recompute: wrote {out}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--models", nargs="+", default=["deep_mlp", "resnet18", "transformer"])
    r.add_argument("--batches", nargs="+", type=int, default=[64, 256])
    r.add_argument("--fractions", default=DEFAULT_FRACTIONS)
    r.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    r.add_argument("--threads", type=int, default=os.cpu_count())
    r.add_argument("--repeats", type=int, default=2)
    r.add_argument("--out")
    r.add_argument("--no-torch", action="store_true")
    r.add_argument("--kernel-times", action="store_true",
                   help="also choose each budget by the plain build's measured kernel times "
                   "(cairn --kernel-times)")
    r.add_argument("--command", default="bench/recompute/run.sh")
    t = sub.add_parser("torch")
    t.add_argument("--model", required=True)
    t.add_argument("--batch", type=int, required=True)
    t.add_argument("--mode", choices=["plain", "sqrt", "budget"], required=True)
    t.add_argument("--budget", type=float)
    t.add_argument("--threads", type=int, default=os.cpu_count())
    t.add_argument("--warmup", type=int, default=2)
    t.add_argument("--steps", type=int, default=5)
    t.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if args.what == "run":
        main_run(args)
    else:
        torch_run(args)


if __name__ == "__main__":
    main()
