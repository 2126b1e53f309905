#!/usr/bin/env python3
"""Training-step time and memory on one GPU: Cairn's CUDA executables against PyTorch eager and
torch.compile, fp32 with TF32 off, same GPU, same model, same optimizer, same batch.

Runs from a bundle made by scripts/gpu-bundle.sh (the CUDA executables at the benchmark
batches, its --bench, by default mlp 2048, cnn 1024, resnet18 512, transformer 1024: large
training batches, at which one step's kernels have work for the whole GPU, still far from its
memory (the plans: 12 MiB, 386 MiB, 2.35 GiB, 565 MiB); the data; the PyTorch models):

  bash build/gpu-bundle/bench/run.sh --out RESULTS [--models mlp cnn] [--steps 200]

  bench.py run --bundle DIR --out FILE|DIR [--models ...] [--steps N] [--warmup W] [--repeats R]
      Cairn: `EXE train --steps W` and `--steps W+N` (Fashion-MNIST; ResNet-18's 3x32x32
      inputs are the images padded and repeated over 3 channels), each R times; ms/step is
      the difference of the metrics' "seconds" (the training loop's wall time) over N, so
      start-up, the first eager step, the graph capture and the final evaluation cancel; the
      median of the R differences. Memory: device_arena_bytes (the one cudaMalloc, the plan),
      measured_peak_bytes, and the arena plus device_overhead_bytes (context, cuBLASLt, cuDNN,
      graphs: everything the process holds on the device, from cudaMemGetInfo).
      PyTorch (test/reference/pytorch_models.py; torch.optim from the model file's `optimizer`
      line; cudnn.benchmark on, as Cairn times cuDNN's algorithms too), one process per
      variant: "eager" and "compile" (torch.compile(model), default mode) feed batches as
      Cairn's executables do (the uint8 data set in host memory, gathered by a shuffled
      permutation, scaled to float32 on the host, copied to the GPU); "eager, data on GPU"
      keeps the data set on the GPU (no host work per step), for scale. W warm-up steps
      (compilation happens there), then N steps each between two CUDA events; ms/step is the
      median step. Memory after warm-up: torch.cuda.max_memory_allocated (tensors: weights,
      gradients, optimizer state, activations, workspaces), max_memory_reserved (the caching
      allocator's segments) and the process's device total (cudaMemGetInfo: total - free, the
      context included, comparable to Cairn's arena + overhead).
      Recomputation: the bundle's builds of each model under `--memory-budget` at 1/2 and 1/3
      of its plain arena (or the smallest arena recomputation reaches), timed as Cairn's plain
      build; the report gives each one's arena, extra FLOPs and step-time overhead.
  bench.py torch --model M --batch B --variant eager|compile|eager-device ...
      One PyTorch measurement (run by `run` in a child process); prints one JSON object.

Half precision: where the bundle has a model's benchmark executables built with --precision
bf16 or f16 (gpu-bundle.sh --precisions), each is timed as above against PyTorch eager under
torch.autocast("cuda", dtype) (f16 with torch.amp.GradScaler, as Cairn scales f16 losses),
reading batches from host memory; the report gives both steps, Cairn's arena against its
float32 arena and against autocast's allocated peak. Cairn's GPU half step stores half tensors
and computes in float32 (no tensor cores yet), so its numbers are memory, not speed. The rest
is fp32 with TF32 off.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def bundle_root(path=None):
    """The bundle: --bundle, or the folder above this file when it is one."""
    for candidate in ([path] if path else []) + [os.path.dirname(HERE)]:
        if candidate and os.path.isfile(os.path.join(candidate, "MANIFEST.json")):
            return os.path.abspath(candidate)
    sys.exit("bench.py: no bundle (MANIFEST.json) found; make one with "
             "`bash scripts/gpu-bundle.sh` and pass --bundle build/gpu-bundle")


VARIANTS = [("eager", "eager"), ("compile", "torch.compile"),
            ("eager-device", "eager, data on GPU")]
# PyTorch eager under autocast, for the half-precision rows.
HALF_VARIANTS = {"bf16": "autocast-bf16", "f16": "autocast-f16"}


# ---------------------------------------------------------------------------------------------
# PyTorch, in a child process


def torch_measure(args):
    import numpy as np
    import torch
    import torch.nn.functional as F

    root = bundle_root(args.bundle)
    sys.path.insert(0, root)
    sys.path.insert(0, os.path.join(root, "reference"))
    import gpu_common as gc
    from check_step_agreement import make_optimizer
    from pytorch_models import MODELS

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.benchmark = True
    cuda = args.device == "cuda"
    device = torch.device(args.device)
    torch.manual_seed(0)
    ctor, shape = MODELS[args.model]
    model = ctor().to(device).train()
    opt = make_optimizer(os.path.join(root, "examples", args.model + ".cairn"), model.parameters())
    net = torch.compile(model) if args.variant == "compile" else model
    half = {"autocast-bf16": torch.bfloat16, "autocast-f16": torch.float16}.get(args.variant)
    # f16 scales the loss (GradScaler's defaults), as Cairn's f16 steps do.
    scaler = torch.amp.GradScaler(args.device) if half == torch.float16 else None

    images, labels = gc.fashion_split(os.path.join(root, "data", "fashion-mnist"), "train")
    images = torch.from_numpy(np.array(gc.shaped_images(images, shape)))  # writable
    labels = torch.from_numpy(labels.astype(np.int64))
    if args.variant == "eager-device":
        images, labels = images.to(device), labels.to(device)
    n, batch = images.shape[0], args.batch
    generator = torch.Generator().manual_seed(0)
    order = {"perm": torch.randperm(n, generator=generator), "next": 0}

    def next_batch():
        if order["next"] + batch > n:  # a new epoch, the last partial batch dropped
            order["perm"], order["next"] = torch.randperm(n, generator=generator), 0
        idx = order["perm"][order["next"]:order["next"] + batch]
        order["next"] += batch
        if args.variant == "eager-device":
            idx = idx.to(device, non_blocking=True)
            return images[idx].float().div_(255), labels[idx]
        x = images[idx].float().div_(255)  # on the host, as Cairn's fillBatch
        return x.to(device), labels[idx].to(device)

    total = torch.zeros((), device=device)

    def step():
        x, y = next_batch()
        opt.zero_grad(set_to_none=True)
        if half is None:
            loss = F.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
        else:
            with torch.autocast(device_type=args.device, dtype=half):
                loss = F.cross_entropy(net(x), y)
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
        total.add_(loss.detach().float())

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    start = time.perf_counter()
    for _ in range(args.warmup):
        step()
    sync()
    warmup_seconds = time.perf_counter() - start
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
    else:  # --device cpu: the plumbing without a GPU, wall-clock steps
        events = [None] * (args.steps + 1)
    stamps = [0.0] * (args.steps + 1)
    start = time.perf_counter()
    for i in range(args.steps + 1):
        if i:
            step()
        if cuda:
            events[i].record()
        stamps[i] = time.perf_counter()
    sync()
    wall = time.perf_counter() - start
    times = [events[i].elapsed_time(events[i + 1]) if cuda else 1000 * (stamps[i + 1] - stamps[i])
             for i in range(args.steps)]
    result = {"ms_per_step": statistics.median(times), "ms_mean": 1000 * wall / args.steps,
              "ms_min": min(times), "ms_max": max(times), "warmup_seconds": warmup_seconds,
              "mean_loss": float(total) / (args.warmup + args.steps), "torch": torch.__version__,
              "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()}
    if cuda:
        free, total_memory = torch.cuda.mem_get_info()
        result.update({"max_allocated": torch.cuda.max_memory_allocated(),
                       "max_reserved": torch.cuda.max_memory_reserved(),
                       "device_total": total_memory - free, "gpu": torch.cuda.get_device_name()})
    return result


# ---------------------------------------------------------------------------------------------
# The run


def cairn_measure(run, bundle, model, entry, args, work, image_shape=None):
    """Cairn's ms/step (median of the differences) and the metrics of the longest run."""
    import gpu_common as gc
    exe = bundle.exe(entry["exe"])
    data = gc.data_dir(bundle.path("data", "fashion-mnist"), work,
                       image_shape or entry["image_shape"])
    diffs, last = [], None
    for r in range(args.repeats):
        seconds = {}
        for steps in (args.warmup, args.warmup + args.steps):
            path = os.path.join(work, f"{model}-{steps}-{r}.json")
            rc, out, _ = run([exe, "train", "--data", data, "--steps", steps, "--seed", r,
                              "--metrics", path], timeout=args.timeout)
            if rc != 0:
                raise RuntimeError(f"{os.path.basename(exe)} train --steps {steps} exited with "
                                   f"{rc}: {gc.tail(out, 8)}")
            with open(path) as f:
                last = json.load(f)
            seconds[steps] = last["seconds"]
        diffs.append(1000 * (seconds[args.warmup + args.steps] - seconds[args.warmup]) / args.steps)
    return {"ms_per_step": statistics.median(diffs), "ms_runs": diffs, "metrics": last}


def torch_run(bundle, model, batch, variant, args):
    cmd = [sys.executable, os.path.abspath(__file__), "torch", "--bundle", bundle.root,
           "--model", model, "--batch", str(batch), "--variant", variant,
           "--steps", str(args.steps), "--warmup", str(args.warmup)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout} s"}
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        return {"error": (lines[-1] if lines else f"exit {proc.returncode}")[:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt_ms(x):
    return f"{x:.3f}" if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def ratio(a, b):
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    return f"{a / b:.2f}x" if numbers and b else "-"


def run_bench(args):
    root = bundle_root(args.bundle)
    sys.path.insert(0, root)
    import gpu_common as gc

    bundle = gc.Bundle(root)
    host = bundle.manifest["target"] == "cpu"
    if host and not args.host_run:
        sys.exit("bench.py: this bundle holds CPU executables: pass --host-run (checks the "
                 "plumbing only) or make a CUDA bundle")
    info = None
    if not host:
        info, why = gc.gpu_info()
        if info is None:
            print(f"bench.py: no GPU: {why}")
            return 77
    work = os.path.join(os.path.abspath(args.work), bundle.key)
    os.makedirs(work, exist_ok=True)
    bundle.unpack(work)
    date = datetime.datetime.now(datetime.timezone.utc)
    out = args.out
    if not out.endswith(".md"):  # a folder
        os.makedirs(out, exist_ok=True)
        out = os.path.join(out, f"gpu-{date.strftime('%Y-%m-%d')}.md")
    else:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    models = args.models or list(bundle.manifest["bench"])
    missing = [m for m in models if m not in bundle.manifest["bench"]]
    if missing:
        sys.exit(f"bench.py: no benchmark executable for {', '.join(missing)} in the bundle "
                 f"(gpu-bundle.sh --bench)")

    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(
        [bundle.lib_dir] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    exes = [bundle.exe(bundle.manifest["bench"][m]["exe"]) for m in models]
    env, found, still = gc.resolve_libraries(exes, env)
    if still:
        sys.exit(f"bench.py: libraries not found: {', '.join(still)} (set CAIRN_CUDA_LIB_DIRS)")
    run = gc.Runner(os.path.join(work, "bench.log"), env)
    try:
        import importlib.metadata
        torch_version = importlib.metadata.version("torch")
    except Exception:
        torch_version = None

    results = {}
    for m in models:
        entry = bundle.manifest["bench"][m]
        print(f"== {m} at batch {entry['batch']}", flush=True)
        r = {"batch": entry["batch"], "plan": entry["plan"]}
        try:
            if args.half_only:
                raise RuntimeError("not measured (--half-only)")
            r["cairn"] = cairn_measure(run, bundle, m, entry, args, work)
        except (RuntimeError, gc.NoDevice) as e:
            r["cairn"] = {"error": str(e)}
        print(f"   cairn: {r['cairn'].get('ms_per_step', r['cairn'].get('error'))}", flush=True)
        r["recompute"] = []
        for budget in ([] if args.half_only else entry.get("recompute", [])):
            try:
                row = cairn_measure(run, bundle, f"{m}-budget-{budget['fraction']:g}", budget,
                                    args, work, image_shape=entry["image_shape"])
            except (RuntimeError, gc.NoDevice) as e:
                row = {"error": str(e)}
            row.update(fraction=budget["fraction"], budget=budget["budget"], plan=budget["plan"])
            r["recompute"].append(row)
            print(f"   cairn, budget {budget['fraction']:g} of the plain arena: "
                  f"{row.get('ms_per_step', row.get('error'))}", flush=True)
        for variant, _ in VARIANTS:
            r[variant] = ({"error": "not measured (--half-only)"} if args.half_only
                          else torch_run(bundle, m, entry["batch"], variant, args) if torch_version
                          else {"error": "torch is not installed"})
            print(f"   {variant}: {r[variant].get('ms_per_step', r[variant].get('error'))}",
                  flush=True)
        r["half"] = []
        for half in entry.get("half", []):  # bundles before half precision have none
            p = half["precision"]
            row = {"precision": p, "plan": half["plan"]}
            try:
                row["cairn"] = cairn_measure(run, bundle, f"{m}-{p}", half, args, work,
                                             image_shape=entry["image_shape"])
            except (RuntimeError, gc.NoDevice) as e:
                row["cairn"] = {"error": str(e)}
            row["torch"] = (torch_run(bundle, m, entry["batch"], HALF_VARIANTS[p], args)
                            if torch_version else {"error": "torch is not installed"})
            r["half"].append(row)
            cairn_ms = row["cairn"].get("ms_per_step", row["cairn"].get("error"))
            torch_ms = row["torch"].get("ms_per_step", row["torch"].get("error"))
            print(f"   cairn {p}: {cairn_ms}; {HALF_VARIANTS[p]}: {torch_ms}", flush=True)
        results[m] = r
        write_report(out, args, bundle, info, torch_version, results, date)  # after each model
        with open(os.path.splitext(out)[0] + ".json", "w") as f:
            json.dump({"date": date.isoformat(), "gpu": info, "bundle": bundle.manifest["commit"],
                       "results": results}, f, indent=1)
    print(f"wrote {out}")
    return 0


def write_report(out, args, bundle, info, torch_version, results, date):
    import gpu_common as gc
    manifest = bundle.manifest
    first = next((r[v] for r in results.values() for v, _ in VARIANTS if "gpu" in r.get(v, {})), {})
    lines = ["# GPU training step: Cairn against PyTorch eager and torch.compile", "",
             f"- command: `{args.command or ' '.join(sys.argv)}`",
             "- machine: " + (f"{info['name']} ({info['memory']}), driver {info['driver']} "
                              f"(CUDA {info['driver_cuda']})" if info else "no GPU (--host-run)")
             + f"; CPU {gc.cpu_name()}",
             f"- date: {date.strftime('%Y-%m-%d %H:%M UTC')}; commit {manifest['commit']} (bundle "
             f"made {manifest['date']} by {manifest['cairn']})",
             f"- PyTorch {torch_version or 'not installed'}"
             + (f" (CUDA {first.get('cuda')}, cuDNN {first.get('cudnn')})" if first else ""),
             "- precision: fp32, TF32 off (torch.backends.cuda.matmul.allow_tf32 = "
             "False, torch.backends.cudnn.allow_tf32 = False; Cairn's kernels use none), except "
             "the half-precision section.",
             f"- Cairn: `EXE train --steps {args.warmup + args.steps}` minus `--steps "
             f"{args.warmup}` over {args.steps} steps, median of {args.repeats}; PyTorch: median "
             f"step by CUDA events over {args.steps} steps after {args.warmup} warm-up steps "
             "(torch.compile compiles there); eager and compile read batches from host memory as "
             "Cairn does, \"data on GPU\" keeps the data set on the GPU",
             "- ratios are PyTorch over Cairn: above 1x Cairn is faster or smaller", "",
             "## Step time", "",
             gc.markdown_table(
                 ["model", "batch", "Cairn ms/step", "eager ms/step", "compile ms/step",
                  "eager, data on GPU ms/step", "eager / Cairn", "compile / Cairn",
                  "Cairn examples/s"],
                 [[m, r["batch"], fmt_ms(r["cairn"].get("ms_per_step")),
                   fmt_ms(r["eager"].get("ms_per_step")), fmt_ms(r["compile"].get("ms_per_step")),
                   fmt_ms(r["eager-device"].get("ms_per_step")),
                   ratio(r["eager"].get("ms_per_step"), r["cairn"].get("ms_per_step")),
                   ratio(r["compile"].get("ms_per_step"), r["cairn"].get("ms_per_step")),
                   f"{1000 * r['batch'] / r['cairn']['ms_per_step']:.0f}"
                   if r["cairn"].get("ms_per_step") else "-"]
                  for m, r in results.items()]),
             "", "## Peak device memory", "",
             "Cairn's arena is the plan (`cairn plan`), allocated once; \"+ overhead\" adds "
             "everything else the process holds on the device. PyTorch's allocated and reserved "
             "peaks are after warm-up; \"device total\" is the process's whole use, context "
             "included.", "",
             gc.markdown_table(
                 ["model", "batch", "Cairn arena", "Cairn measured peak", "Cairn arena + overhead",
                  "eager allocated", "eager reserved", "eager device total", "compile allocated",
                  "compile reserved", "compile device total", "eager allocated / Cairn arena",
                  "compile allocated / Cairn arena", "eager total / Cairn total"],
                 [_memory_row(m, r) for m, r in results.items()])]
    recompute = [(m, r, row) for m, r in results.items() for row in r.get("recompute", [])]
    if recompute:
        lines += ["", "## Recomputation", "",
                  "Cairn's step under `cairn build --memory-budget` at fractions of the plain "
                  "arena (or the smallest arena recomputation reaches), timed as above; the "
                  "overhead is against the plain build's step.", "",
                  gc.markdown_table(
                      ["model", "batch", "budget", "arena", "plain arena / arena",
                       "extra FLOPs", "Cairn ms/step", "overhead"],
                      [_recompute_row(m, r, row) for m, r, row in recompute])]
    half = [(m, r, row) for m, r in results.items() for row in r.get("half", [])]
    if half:
        lines += ["", "## Half precision", "",
                  "Cairn's build with `--precision bf16|f16` (half tensors stored; GEMMs, "
                  "convolutions and their input gradients on the tensor cores with float32 "
                  "accumulation, the rest in float32; f16 with the dynamic loss scaler) "
                  "against PyTorch eager under "
                  "`torch.autocast` (tensor cores; f16 with GradScaler), both reading batches "
                  "from host memory; timed as above.", "",
                  gc.markdown_table(
                      ["model", "batch", "precision", "Cairn ms/step", "autocast ms/step",
                       "autocast / Cairn", "Cairn arena", "float32 arena / arena",
                       "autocast allocated", "autocast allocated / Cairn arena",
                       "Cairn skipped steps"],
                      [_half_row(m, r, row) for m, r, row in half])]
    errors = [(m, v, r[v]["error"]) for m, r in results.items()
              for v in ["cairn"] + [x for x, _ in VARIANTS] if "error" in r.get(v, {})]
    errors += [(m, f"{row['precision']} {side}", row[side]["error"]) for m, r, row in half
               for side in ("cairn", "torch") if "error" in row[side]]
    if errors:
        lines += ["", "## Not measured", ""] + [f"- {m}, {v}: {e}" for m, v, e in errors]
    lines += ["", "Per-run numbers: the JSON file next to this one."]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def _recompute_row(m, r, row):
    import gpu_common as gc
    plan, plain = row.get("plan") or {}, r.get("plan") or {}
    arena, plain_arena = plan.get("arena_bytes"), plain.get("arena_bytes")
    recompute = plan.get("recompute") or {}
    extra, total = recompute.get("extra_flops"), recompute.get("step_flops")
    ms, plain_ms = row.get("ms_per_step"), r["cairn"].get("ms_per_step")
    overhead = (f"{ms / plain_ms - 1:+.1%}" if isinstance(ms, (int, float)) and
                isinstance(plain_ms, (int, float)) and plain_ms else "-")
    return [m, r["batch"], f"{row['fraction']:g} ({gc.format_bytes(row['budget'])})",
            gc.format_bytes(arena), ratio(plain_arena, arena),
            f"{extra / total:+.1%}" if extra is not None and total else "-",
            fmt_ms(ms), overhead]


def _half_row(m, r, row):
    import gpu_common as gc
    metrics = row["cairn"].get("metrics") or {}
    arena = metrics.get("device_arena_bytes") or (row.get("plan") or {}).get("arena_bytes")
    plain = (r["cairn"].get("metrics") or {}).get("device_arena_bytes") or \
        (r.get("plan") or {}).get("arena_bytes")
    ms, torch_ms = row["cairn"].get("ms_per_step"), row["torch"].get("ms_per_step")
    skipped = metrics.get("skipped_steps")
    return [m, r["batch"], row["precision"], fmt_ms(ms), fmt_ms(torch_ms), ratio(torch_ms, ms),
            gc.format_bytes(arena), ratio(plain, arena),
            gc.format_bytes(row["torch"].get("max_allocated")),
            ratio(row["torch"].get("max_allocated"), arena),
            "-" if skipped is None else str(skipped)]


def _memory_row(m, r):
    import gpu_common as gc
    metrics = r["cairn"].get("metrics") or {}
    arena = metrics.get("device_arena_bytes") or metrics.get("planned_arena_bytes")
    overhead = metrics.get("device_overhead_bytes")
    total = arena + overhead if isinstance(arena, int) and isinstance(overhead, int) else None
    e, c = r["eager"], r["compile"]
    return [m, r["batch"], gc.format_bytes(arena),
            gc.format_bytes(metrics.get("measured_peak_bytes")),
            gc.format_bytes(total), gc.format_bytes(e.get("max_allocated")),
            gc.format_bytes(e.get("max_reserved")), gc.format_bytes(e.get("device_total")),
            gc.format_bytes(c.get("max_allocated")), gc.format_bytes(c.get("max_reserved")),
            gc.format_bytes(c.get("device_total")), ratio(e.get("max_allocated"), arena),
            ratio(c.get("max_allocated"), arena), ratio(e.get("device_total"), total)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    sub = ap.add_subparsers(dest="command_name", required=True)
    r = sub.add_parser("run")
    r.add_argument("--bundle")
    r.add_argument("--out", required=True,
                   help="the report FILE.md (FILE.json beside it), or a folder for gpu-DATE.md")
    r.add_argument("--work", default="/tmp/cairn-gpu-bench")
    r.add_argument("--models", nargs="+")
    r.add_argument("--steps", type=int, default=200)
    r.add_argument("--warmup", type=int, default=20)
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--timeout", type=int, default=400, help="seconds per run")
    r.add_argument("--command", help="the command line to record")
    r.add_argument("--half-only", action="store_true",
                   help="time only the half-precision builds and PyTorch's autocast")
    r.add_argument("--host-run", action="store_true",
                   help="a --target cpu bundle without a GPU: checks the plumbing only")
    t = sub.add_parser("torch")
    t.add_argument("--bundle")
    t.add_argument("--model", required=True)
    t.add_argument("--batch", type=int, required=True)
    t.add_argument("--variant", choices=[v for v, _ in VARIANTS] + list(HALF_VARIANTS.values()),
                   required=True)
    t.add_argument("--steps", type=int, default=200)
    t.add_argument("--warmup", type=int, default=20)
    t.add_argument("--device", default="cuda", help="cpu: check the plumbing without a GPU")
    args = ap.parse_args()
    if args.command_name == "torch":
        print(json.dumps(torch_measure(args)))
        return 0
    return run_bench(args)


if __name__ == "__main__":
    sys.exit(main())
