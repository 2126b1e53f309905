"""Memory of one training step (and of inference): Cairn's static plan against XLA's plan
(JAX on the CPU) and PyTorch's measured peak, same models, same batch, same machine.

  bench.py run [--models M ...] [--batches N ...] [--steps train inference]
               [--precisions f32 bf16 f16] [--out FILE.md]
      Run by bench/memory/run.sh in its virtual environment (JAX); starts a child process per
      measurement and writes FILE.md and FILE.json (the raw numbers). Per model and batch:
      - Cairn: `cairn plan examples/M.cairn --batch N --step train|forward --memory-report
        OUT.json`: the planned arena (arena_bytes), every buffer in its own place
        (no_reuse_bytes), the most bytes live at one time (lower_bound_bytes) and the planner's
        own time (planning_seconds). Skipped, with a message, where `cairn plan` has no
        --memory-report.
      - XLA (`bench.py jax`, this interpreter): the model file's step in JAX
        (jax_models.py), jax.jit with params, buffers and optimizer state donated
        (donate_argnums), lowered and compiled for the CPU with XLA_COMPLETE's flags (below);
        from compiled.memory_analysis(): argument + output - alias + temp bytes, what the
        executable needs live (arguments stay live, outputs not aliased to a donated argument
        get new buffers, temp is XLA's one planned scratch allocation). Inference: the jitted
        eval-mode forward(params, buffers, image), nothing donated. Also compiled with the
        default flags, whose analysis misses the tensors inside YNNPACK fusions (listed only).
      - PyTorch (`bench.py torch`, /usr/bin/python3, torch 1.13): the twin in
        test/reference/pytorch_models.py with the model file's torch.optim optimizer; the peak
        of bytes live in PyTorch's CPU allocator during one training step (zero_grad
        set_to_none, forward, cross-entropy, backward, optimizer step) after one warm-up step,
        or during `with torch.no_grad(): model.eval()(x)` after one warm-up call. Measured
        with the autograd profiler (legacy, profile_memory=True), enabled before the model is
        built: it records every allocation and free of c10's CPU allocator with a time stamp;
        the running sum over them, in time order, is the bytes live, and the peak is its
        maximum between the marks of the measured step. The sum at the step's start is
        checked against the bytes of every tensor known to be live then (params, buffers,
        optimizer state, gradients, the batch).
      - Checks (`bench.py torch-ref` then `bench.py jax-check`, batch 4): each JAX model has
        the PyTorch twin's state_dict names, shapes and parameter count; on the twin's
        weights its float32 eval output and training loss (jitted) agree with PyTorch's, and
        two float64 training steps with dropout off (losses, outputs, every parameter's
        update, buffers) agree with PyTorch's in float64.
      - `bench.py torch-selftest`: the PyTorch measurement on allocations of known sizes.
      Mixed precision (--precisions with bf16 and/or f16; default f32 alone, the above): per
      model, batch, step and half precision P, besides the float32 row:
      - Cairn: `cairn plan ... --precision P --memory-report OUT.json`: the arena, and the
        bytes of its "activations and temporaries", every buffer whose kind is none of
        param, buffer, optimizer, grad, input, output (so activation, saved, temp, workspace),
        summed over all such buffers and over those live at the peak; each as a ratio to the
        same model's float32 plan. The goal (issue 13): activations and temporaries at most
        HALF_GOAL of float32's. A precision the compiler refuses (f16 on the CUDA target, say)
        is recorded with its message.
      - PyTorch: the same measurement as above with forward and loss under
        `torch.autocast(device_type="cpu", dtype=torch.bfloat16|float16)` (float32 master
        weights and optimizer state, backward and optimizer step outside it), in PyTorch 2.x
        from PyPI (--torch2-python, build/bench-torch-venv: Debian's torch 1.13 has no f16
        CPU autocast); the float32 step is measured again there, so the ratios compare one
        PyTorch.
      - XLA: the step of jax_models.py with compute_dtype (float32 master params and image
        cast to P inside the jitted step, norms and softmax in float32, float32 loss and
        gradients), its memory analysis as above.
      - jax-check also runs each half step on the check batch: its loss against PyTorch's
        float64 loss (HALF_TOLERANCE) and the updated params still float32.
"""
import argparse
import contextlib
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import commit, cpu_name  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = ["mlp", "cnn", "resnet18", "transformer", "deep_mlp"]
MiB = 1 << 20
# XLA:CPU (jaxlib 0.10) fuses chains of ops into YNNPACK subgraphs ("__ynn_fusion") by default;
# the tensors inside one are YNNPACK's, outside XLA's buffer assignment, so
# memory_analysis() does not see them (cnn's whole inference forward becomes one fusion: temp
# 0 bytes). Without the dot/eltwise/reduce fusion types, a YNNPACK fusion holds one
# convolution or dot and every tensor between ops is in XLA's plan.
XLA_COMPLETE = "--xla_cpu_experimental_ynn_fusion_type=-dot,-eltwise,-reduce"
CHECK_BATCH = 4
# Accepted errors of the JAX twin against PyTorch (max|jax - torch| / max|torch|).
OUTPUT_TOLERANCE = 1e-4  # float32 eval-mode output
F64_TOLERANCE = 1e-9  # float64 training steps: losses, outputs, buffers
UPDATE_TOLERANCE = 1e-5  # float64 change of each param: Adam turns the rounding noise of a
#                          zero gradient (k_proj's bias) into changes of lr * noise / eps
HALF_TOLERANCE = 5e-2  # the loss of a half-precision step against float64's (bf16: 8 bits)
PRECISIONS = ["f32", "bf16", "f16"]
HALF_NAMES = {"bf16": "bfloat16", "f16": "float16"}  # torch's and jax.numpy's names
HALF_GOAL = 0.55  # issue 13: half's activations and temporaries <= 0.55 of float32's
# Buffer kinds of Cairn's memory report that are not activations or temporaries.
NOT_ACTIVATIONS = ("param", "buffer", "optimizer", "grad", "input", "output")


# ----------------------------------------------------------------------------- PyTorch side
# Runs under /usr/bin/python3 (Debian's torch 1.13 and NumPy 1.x).

def _torch_profiler():
    """(start, stop): the legacy autograd profiler with memory profiling; stop() returns
    its raw records (per thread). The same in Debian's torch 1.13 and PyTorch 2.15."""
    import torch
    from torch.autograd import (ProfilerConfig, ProfilerState, _disable_profiler_legacy,
                                _enable_profiler_legacy)
    # state, record_shapes, profile_memory, with_stack, with_flops, with_modules, experimental
    cfg = ProfilerConfig(ProfilerState.CPU, False, True, False, False, False,
                         torch._C._profiler._ExperimentalConfig())
    return (lambda: _enable_profiler_legacy(cfg)), _disable_profiler_legacy


@contextlib.contextmanager
def _marked(name):
    """A profiler range named `name` (record_function without its 4-byte placeholder
    tensor, which would count as live at the range's start; PyTorch 2.x's has none)."""
    import torch
    ops = torch.ops.profiler
    if hasattr(ops, "_record_function_enter_new"):
        handle = ops._record_function_enter_new(name, None)
        try:
            yield
        finally:
            ops._record_function_exit._RecordFunction(handle)
        return
    handle = ops._record_function_enter(name, None)
    try:
        yield
    finally:
        ops._record_function_exit(handle)


def _live_bytes(records, mark):
    """From profiler records: (bytes live when range `mark` begins, peak bytes live within
    it, threads that allocated). Bytes live = running sum of the allocator's allocations
    (+) and frees (-) since profiling began, in time order."""
    mem, begin, end, handle = [], None, None, None
    for thread in records:
        for r in thread:
            if r.kind() == "memory_alloc":
                mem.append((r.start_us(), r.cpu_memory_usage(), r.thread_id()))
            elif r.kind() == "push" and r.name() == mark:
                begin, handle = r.start_us(), r.handle()
            elif r.kind() == "pop" and begin is not None and r.handle() == handle:
                end = r.start_us()
    if begin is None or end is None:
        raise RuntimeError(f"profiler: no range {mark!r}")
    mem.sort(key=lambda m: m[0])  # stable: one thread's events keep their order on ties
    live, at_begin, peak = 0, None, None
    for t, nbytes, _ in mem:
        if at_begin is None and t >= begin:
            at_begin = peak = live
        if at_begin is not None and t > end:
            break
        live += nbytes
        if at_begin is not None:
            peak = max(peak, live)
    if at_begin is None:
        at_begin = peak = live
    return at_begin, peak, sorted({m[2] for m in mem})


def _storage_bytes(tensors):
    """Bytes of the distinct storages behind `tensors`."""
    seen = {}
    for t in tensors:
        if t is not None:
            s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
            seen[s.data_ptr()] = s.nbytes()
    return sum(seen.values())


def _autocast(precision):
    """A new context for the forward and loss: CPU autocast to bf16 or f16, or nothing."""
    import torch
    if precision == "f32":
        return contextlib.nullcontext()
    return torch.autocast(device_type="cpu", dtype=getattr(torch, HALF_NAMES[precision]))


def torch_peak(args):
    """PyTorch's peak bytes during one training step or one inference call."""
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_optimizer
    from pytorch_models import MODELS

    torch.set_num_threads(args.threads)
    start, stop = _torch_profiler()
    mark = "cairn_bench_measured"
    start()
    try:
        torch.manual_seed(0)
        ctor, in_shape = MODELS[args.model]
        model = ctor()
        x = torch.rand(args.batch, *in_shape)
        y = torch.randint(0, 10, (args.batch,))
        if args.step == "train":
            opt = make_optimizer(os.path.join(args.examples, args.model + ".cairn"),
                                 model.parameters())
            model.train()

            def step():
                opt.zero_grad(set_to_none=True)
                with _autocast(args.precision):
                    loss = F.cross_entropy(model(x), y)
                loss.backward()
                del loss  # freed before the update, as the one-expression form does
                opt.step()

            step()  # warm-up: the optimizer state exists from here on
            state = [t for s in opt.state.values() for t in s.values()
                     if isinstance(t, torch.Tensor)]
            expected = _storage_bytes(list(model.parameters()) + list(model.buffers()) + state
                                      + [p.grad for p in model.parameters()] + [x, y])
            with _marked(mark):
                step()
        else:
            model.eval()
            with torch.no_grad():
                with _autocast(args.precision):
                    model(x)
                expected = _storage_bytes(list(model.parameters()) + list(model.buffers())
                                          + [x, y])
                with _marked(mark):
                    with _autocast(args.precision):
                        model(x)  # the output is freed at the end of the statement
    finally:
        records = stop()
    at_begin, peak, threads = _live_bytes(records, mark)
    return {"peak_bytes": peak, "live_at_start_bytes": at_begin,
            "expected_live_at_start_bytes": expected, "allocating_threads": len(threads),
            "torch": torch.__version__, "precision": args.precision}


def torch_selftest(args):
    """The measurement on allocations of known sizes, inside and outside ops, in order."""
    import torch
    start, stop = _torch_profiler()
    mark = "cairn_bench_measured"
    mb = 1 << 20
    start()
    try:
        a = torch.empty(7 * mb, dtype=torch.uint8)                        # live 7
        with _marked(mark):
            b = torch.empty(10 * mb, dtype=torch.uint8)                   # 17
            c = torch.empty(5 * mb, dtype=torch.uint8)                    # 22
            del b                                                         # 12
            d = torch.ones(1024, 1024) @ torch.ones(1024, 1024)           # 12+4+4+4 = 24 peak
            del d                                                         # 12
            e = torch.cat([torch.empty(mb, dtype=torch.uint8)] * 3)       # 12 + 1 + 3 = 16
            del c, e                                                      # 7
        del a
    finally:
        records = stop()
    at_begin, peak, _ = _live_bytes(records, mark)
    expected = {"live_at_start_bytes": 7 * mb, "peak_bytes": 24 * mb}
    got = {"live_at_start_bytes": at_begin, "peak_bytes": peak}
    return {"expected": expected, "measured": got, "ok": expected == got}


def torch_reference(args):
    """Writes the PyTorch twin's initial weights, a batch and its eval output (float32), and
    two training steps on that batch in float64 with dropout off (the losses, the eval
    output and the state_dict after them), to an .npz file for `jax-check`."""
    import copy

    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_optimizer
    from pytorch_models import MODELS, param_count

    torch.manual_seed(1)
    ctor, in_shape = MODELS[args.model]
    model = ctor()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    x = torch.rand(args.batch, *in_shape)
    y = torch.randint(0, 10, (args.batch,))
    out = {"x": x.numpy(), "y": y.numpy(), "param_count": np.array(param_count(model))}
    for k, v in model.state_dict().items():
        out["sd0/" + k] = v.detach().numpy().copy()
    with torch.no_grad():
        out["logits0"] = model.eval()(x).numpy()
    model = copy.deepcopy(model).double()
    opt = make_optimizer(os.path.join(args.examples, args.model + ".cairn"), model.parameters())
    model.train()
    losses = []
    for _ in range(2):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x.double()), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out["losses_f64"] = np.array(losses)
    with torch.no_grad():
        out["logits1_f64"] = model.eval()(x.double()).numpy()
    for k, v in model.state_dict().items():
        out["sd1_f64/" + k] = v.detach().numpy().copy()
    np.savez(args.ref, **out)
    return {"wrote": args.ref}


# ----------------------------------------------------------------------------- JAX side
# Runs in the virtual environment of run.sh.

def _jax_model(args):
    sys.path.insert(0, HERE)
    import jax_models as jm
    model = jm.MODELS[args.model]()
    optimizer = jm.make_optimizer(*jm.read_optimizer(os.path.join(args.examples,
                                                                  args.model + ".cairn")))
    return jm, model, optimizer


def _compute_dtype(precision):
    """jax.numpy's type for a precision: None for f32 (no casts)."""
    import jax.numpy as jnp
    return None if precision == "f32" else getattr(jnp, HALF_NAMES[precision])


def jax_memory(args):
    """XLA's memory analysis of the compiled step (mixed precision for bf16, f16)."""
    import jax
    import jax.numpy as jnp
    jm, model, optimizer = _jax_model(args)
    params, buffers = jm.abstract_params(model)  # shapes and dtypes suffice to compile
    image = jax.ShapeDtypeStruct((args.batch,) + model.input_shape, jnp.float32)
    compute = _compute_dtype(args.precision)
    if args.step == "train":
        label = jax.ShapeDtypeStruct((args.batch,), jnp.int32)
        fn = jax.jit(jm.make_train_step(model, optimizer, compute_dtype=compute),
                     donate_argnums=(0, 1, 2))
        lowered = fn.lower(params, buffers, jax.eval_shape(optimizer[0], params), image, label,
                           jax.eval_shape(lambda: jax.random.PRNGKey(0)))
    else:
        lowered = jax.jit(jm.make_forward(model, compute)).lower(params, buffers, image)
    begin = time.perf_counter()
    compiled = lowered.compile()
    seconds = time.perf_counter() - begin
    ma = compiled.memory_analysis()
    fields = ["argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
              "temp_size_in_bytes", "generated_code_size_in_bytes", "peak_memory_in_bytes",
              "host_argument_size_in_bytes", "host_output_size_in_bytes",
              "host_alias_size_in_bytes", "host_temp_size_in_bytes"]
    r = {f: int(getattr(ma, f, -1)) for f in fields}
    r["total_bytes"] = (r["argument_size_in_bytes"] + r["output_size_in_bytes"]
                        - r["alias_size_in_bytes"] + r["temp_size_in_bytes"])
    r["compile_seconds"] = seconds
    r["param_count"] = jm.param_count(model)
    r["precision"] = args.precision
    return r


def _rel_err(a, b, floor=0.0):
    """max|a - b| / max(max|b|, floor)."""
    import numpy as np
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), floor, 1e-300))


def jax_check(args):
    """The JAX model against the PyTorch twin's .npz from `torch-ref`: structure, the eval
    output in float32, two training steps in float64."""
    import jax
    jax.config.update("jax_enable_x64", True)  # arrays below carry their dtype explicitly
    import numpy as np
    jm, model, optimizer = _jax_model(args)
    ref = np.load(args.ref)
    sd0 = {k[4:]: ref[k] for k in ref.files if k.startswith("sd0/")}
    sd1 = {k[8:]: ref[k] for k in ref.files if k.startswith("sd1_f64/")}
    problems = []
    names = set(model.params()) | set(model.buffers())
    if names != set(sd0):
        problems.append(f"state_dict names differ: only JAX {sorted(names - set(sd0))[:5]}, "
                        f"only PyTorch {sorted(set(sd0) - names)[:5]}")
    shapes = {**model.params(), **model.buffers()}
    for n in sorted(names & set(sd0)):
        torch_shape = jm.to_torch_layout(model, n, np.zeros(shapes[n])).shape
        if tuple(torch_shape) != tuple(sd0[n].shape):
            problems.append(f"{n}: JAX shape {shapes[n]} is {torch_shape} in PyTorch's "
                            f"layout, PyTorch has {sd0[n].shape}")
    count, torch_count = jm.param_count(model), int(ref["param_count"])
    if count != torch_count:
        problems.append(f"parameter count {count} != PyTorch's {torch_count}")
    r = {"param_count": count, "torch_param_count": torch_count}
    if problems:
        return {**r, "ok": False, "problems": problems}

    x = np.ascontiguousarray(ref["x"].transpose(0, 2, 3, 1))  # NCHW -> NHWC
    y = ref["y"].astype(np.int32)
    forward = jax.jit(jm.make_forward(model))
    params, buffers = jm.from_torch_state_dict(model, sd0, np.float32)
    r["output_f32"] = _rel_err(forward(params, buffers, x), ref["logits0"])

    step = jax.jit(jm.make_train_step(model, optimizer, dropout=False))
    loss = step(params, buffers, optimizer[0](params), x, y, jax.random.PRNGKey(0))[0]
    r["loss_f32"] = _rel_err(loss, ref["losses_f64"][0])
    # Mixed precision: the step's loss against float64's; params and state stay float32.
    half_ok = True
    for precision in args.precisions:
        if precision == "f32":
            continue
        step = jax.jit(jm.make_train_step(model, optimizer, dropout=False,
                                          compute_dtype=_compute_dtype(precision)))
        loss, p, s, st = step(params, buffers, optimizer[0](params), x, y,
                              jax.random.PRNGKey(0))
        r["loss_" + precision] = _rel_err(loss, ref["losses_f64"][0])
        state = list(p.values()) + list(s.values()) + jax.tree_util.tree_leaves(st)
        kept = all(v.dtype == np.float32 for v in state
                   if jax.numpy.issubdtype(v.dtype, jax.numpy.floating))
        r["float32_state_" + precision] = bool(kept)
        finite = all(bool(np.all(np.isfinite(v))) for v in p.values())
        half_ok = (half_ok and kept and finite
                   and r["loss_" + precision] <= HALF_TOLERANCE)
        if not finite:
            r.setdefault("problems", []).append(f"{precision} step: non-finite params")

    # Float64, op by op: jax.jit of the float64 step miscompiles cnn's backward on XLA:CPU
    # (jaxlib 0.10.2: conv and BatchNorm gradients off by 40-50% under jit, right without;
    # the float32 executables agree with PyTorch to ~1e-6).
    params, buffers = jm.from_torch_state_dict(model, sd0, np.float64)
    x = x.astype(np.float64)
    step = jm.make_train_step(model, optimizer, dropout=False)
    opt_state, p, s, losses = optimizer[0](params), params, buffers, []
    with jax.disable_jit():
        for _ in range(2):
            loss, p, s, opt_state = step(p, s, opt_state, x, y, jax.random.PRNGKey(0))
            losses.append(float(loss))
        r["loss_f64"] = _rel_err(losses, ref["losses_f64"])
        r["output_after_f64"] = _rel_err(jm.make_forward(model)(p, s, x), ref["logits1_f64"])
    # Each parameter's change over the two steps (finer than the weights themselves);
    # changes below a millionth of the weights' magnitude count as zero (a gradient that
    # is 0 in exact arithmetic, like k_proj's bias under softmax, leaves rounding noise).
    r["update_f64"], r["update_worst"] = max(
        (_rel_err(jm.to_torch_layout(model, n, p[n]) - sd0[n], sd1[n] - sd0[n],
                  1e-6 * np.max(np.abs(sd0[n]))), n) for n in model.params())
    r["buffers_f64"] = max([_rel_err(s[n], sd1[n]) for n in model.buffers()] or [0.0])
    r["ok"] = (half_ok and max(r["output_f32"], r["loss_f32"]) <= OUTPUT_TOLERANCE
               and max(r["loss_f64"], r["output_after_f64"], r["buffers_f64"]) <= F64_TOLERANCE
               and r["update_f64"] <= UPDATE_TOLERANCE)
    return r


# ----------------------------------------------------------------------------- Cairn

def cairn_has_memory_report(cairn):
    try:
        out = subprocess.run([cairn, "plan", "--help"], capture_output=True, text=True,
                             timeout=60)
    except OSError as e:
        return False, f"{cairn}: {e}"
    if "--memory-report" not in out.stdout + out.stderr:
        return False, ("`cairn plan` has no --memory-report yet "
                       "(`cairn plan MODEL` has not landed): Cairn's columns are skipped")
    return True, ""


def cairn_plan(args, model, batch, step, work, precision="f32"):
    """The memory report of `cairn plan` for one model, batch, step and precision (f32:
    no --precision flag); for a half precision the compiler refuses, {"refused": its
    message}."""
    report = os.path.join(work, f"cairn-{model}-{batch}-{step}-{precision}.json")
    cmd = [args.cairn_run, "plan", os.path.join(args.examples, model + ".cairn"), "--batch",
           str(batch), "--step", "train" if step == "train" else "forward",
           "--memory-report", report]
    if precision != "f32":
        cmd += ["--precision", precision]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 and precision != "f32":
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        return {"refused": " ".join(lines[:3]) or f"exit code {proc.returncode}",
                "exit_code": proc.returncode,
                "command": " ".join(["cairn"] + cmd[1:])}
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n"
                           f"{(proc.stdout + proc.stderr)[-2000:]}")
    with open(report) as f:
        devices = json.load(f)["devices"]
    total = {k: sum(d[k] for d in devices)
             for k in ("arena_bytes", "no_reuse_bytes", "lower_bound_bytes", "persistent_bytes")}
    total["planning_seconds"] = sum(d["planning_seconds"] for d in devices)
    total["devices"] = len(devices)
    # Bytes of the buffers live at each device's peak (schedule index peak_index, a buffer
    # live over [start, end] inclusive), by kind: what the plan spends its arena on.
    by_kind, all_by_kind, by_dtype = {}, {}, {}
    for d in devices:
        for b in d.get("buffers", []):
            all_by_kind[b["kind"]] = all_by_kind.get(b["kind"], 0) + b["bytes"]
            if "dtype" in b:
                by_dtype[b["dtype"]] = by_dtype.get(b["dtype"], 0) + b["bytes"]
            if "peak_index" in d and b["start"] <= d["peak_index"] <= b["end"]:
                by_kind[b["kind"]] = by_kind.get(b["kind"], 0) + b["bytes"]
    total["at_peak_by_kind"] = by_kind
    total["by_kind"] = all_by_kind
    total["by_dtype"] = by_dtype
    # Activations and temporaries: every buffer that is not state, a gradient or an
    # input/output (the report's kinds), all of them and those live at the peak.
    total["act_temp_bytes"] = sum(v for k, v in all_by_kind.items()
                                  if k not in NOT_ACTIVATIONS)
    total["act_temp_at_peak_bytes"] = sum(v for k, v in by_kind.items()
                                          if k not in NOT_ACTIVATIONS)
    total["precision"] = precision
    return total


# ----------------------------------------------------------------------------- run

def child(python, argv, timeout=1200, xla_flags=None):
    """Runs `PYTHON bench.py ARGV` (with XLA_FLAGS extended by `xla_flags`); its JSON result
    (the last line of its output)."""
    env = dict(os.environ, GLOG_minloglevel="2", TF_CPP_MIN_LOG_LEVEL="2")
    if xla_flags:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + xla_flags).strip()
    cmd = [python, os.path.abspath(__file__)] + [str(a) for a in argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}:\n"
                           f"{(proc.stdout + proc.stderr)[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine():
    return f"{os.cpu_count()} cores, {cpu_name()}"


def mib(b):
    return "n/a" if b is None else f"{b / MiB:.2f}"


def ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.3f}"


def run(args):
    now = datetime.datetime.now(datetime.timezone.utc)
    full = (args.models == EXAMPLES and sorted(args.batches) == [64, 256]
            and sorted(args.steps) == ["inference", "train"])
    # The float32 row is every half row's reference: always measured, first.
    args.precisions = ["f32"] + [p for p in PRECISIONS[1:] if p in args.precisions]
    halves = args.precisions[1:]
    tag = "".join("-" + p for p in halves) + ("" if full else "-quick")
    out = args.out or os.path.join(ROOT, "bench", "results", f"memory-{now:%Y-%m-%d}{tag}.md")
    work = tempfile.mkdtemp(prefix="cairn-bench-memory-")
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    import jax
    import jaxlib
    versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                "torch": child(args.torch_python, ["version"])["torch"]}
    if halves:
        versions["torch2"] = child(args.torch2_python, ["version"])["torch"]
    # A copy of the compiler, so that a rebuild of build/bin/cairn during the run (another
    # engineer's) neither breaks the run nor mixes two compilers' numbers.
    cairn_copy = os.path.join(work, "cairn")
    for attempt in range(30):
        try:
            shutil.copy2(args.cairn, cairn_copy)
            break
        except OSError:
            if attempt == 29 or not os.path.exists(args.cairn):
                cairn_copy = args.cairn  # absent: the check below says so
                break
            time.sleep(10)
    has_cairn, why = cairn_has_memory_report(cairn_copy)
    cairn_version = (datetime.datetime.fromtimestamp(os.path.getmtime(args.cairn),
                                                     datetime.timezone.utc)
                     .strftime("built %Y-%m-%d %H:%M UTC") if os.path.exists(args.cairn)
                     else "absent")
    args.cairn_run = cairn_copy
    if not has_cairn:
        print(f"bench/memory: {why}", flush=True)
    selftest = child(args.torch_python, ["torch-selftest"])
    print(f"PyTorch measurement self-test: {selftest}", flush=True)
    if not selftest["ok"]:
        raise SystemExit("the PyTorch measurement failed its self-test")
    if halves:
        selftest["torch2"] = child(args.torch2_python, ["torch-selftest"])
        print(f"PyTorch {versions['torch2']} measurement self-test: {selftest['torch2']}",
              flush=True)
        if not selftest["torch2"]["ok"]:
            raise SystemExit(f"the PyTorch {versions['torch2']} measurement failed its "
                             "self-test")
    common = ["--examples", args.examples]

    checks = {}
    for model in args.models:
        ref = os.path.join(work, f"ref-{model}.npz")
        child(args.torch_python, ["torch-ref", "--model", model, "--batch", CHECK_BATCH,
                                  "--ref", ref] + common)
        checks[model] = child(sys.executable, ["jax-check", "--model", model, "--ref", ref,
                                               "--precisions"] + args.precisions + common,
                              xla_flags=XLA_COMPLETE)
        print(f"{model}: JAX twin check {checks[model]}", flush=True)

    rows = []
    for model in args.models:
        for batch in args.batches:
            for step in args.steps:
                for precision in args.precisions:
                    rows.append(measure(args, model, batch, step, precision, has_cairn, work,
                                        common, halves))
                    print(json.dumps(rows[-1]), flush=True)
    seconds = time.perf_counter() - began
    versions["cairn"] = cairn_version
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    write_results(args, out, now, versions, has_cairn, why, selftest, checks, rows,
                  load_before, seconds)


def measure(args, model, batch, step, precision, has_cairn, work, common, halves):
    """One row: Cairn's plan, XLA's analysis and PyTorch's peak for one model, batch, step
    and precision. float32: PyTorch is /usr/bin/python3's (and, when half precisions are
    measured too, PyTorch 2.x's as "torch_amp", their reference); half: PyTorch 2.x under
    autocast ("torch_amp")."""
    row = {"model": model, "batch": batch, "step": step, "precision": precision}
    if has_cairn:
        row["cairn"] = cairn_plan(args, model, batch, step, work, precision)
    argv = ["jax", "--model", model, "--batch", batch, "--step", step,
            "--precision", precision] + common
    row["xla"] = child(sys.executable, argv, xla_flags=XLA_COMPLETE)
    torch_argv = ["torch", "--model", model, "--batch", batch, "--step", step, "--threads",
                  args.threads, "--precision", precision] + common
    if precision == "f32":
        row["xla_default"] = child(sys.executable, argv)
        row["torch"] = child(args.torch_python, torch_argv)
    if halves:
        try:
            row["torch_amp"] = child(args.torch2_python, torch_argv)
        except RuntimeError as e:  # e.g. an autocast type this PyTorch lacks
            row["torch_amp"] = {"error": str(e).strip().splitlines()[-1]}
    return row


KINDS = [("persistent", ("param", "buffer", "optimizer", "input", "output")),
         ("grad", ("grad",)), ("saved", ("saved",)), ("activation", ("activation",)),
         ("temp", ("temp",)), ("workspace", ("workspace",))]


def write_results(args, out, now, versions, has_cairn, why, selftest, checks, rows,
                  load_before, seconds):
    all_rows, halves = rows, args.precisions[1:]
    rows = [r for r in rows if r["precision"] == "f32"]  # the tables of float32
    table = []
    for r in rows:
        c = r.get("cairn")
        planned = c["arena_bytes"] if c else None
        xla, pt = r["xla"]["total_bytes"], r["torch"]["peak_bytes"]
        table.append([r["model"], str(r["batch"]), r["step"],
                      mib(planned), mib(c["no_reuse_bytes"] if c else None),
                      mib(c["lower_bound_bytes"] if c else None),
                      f"{1000 * c['planning_seconds']:.2f}" if c else "n/a",
                      mib(xla), mib(pt), ratio(planned, xla), ratio(planned, pt)])
    header = ["model", "batch", "step", "Cairn planned (MiB)", "Cairn no-reuse (MiB)",
              "Cairn lower bound (MiB)", "plan ms", "XLA (MiB)", "PyTorch peak (MiB)",
              "Cairn/XLA", "Cairn/PyTorch"]
    xla_table = [[r["model"], str(r["batch"]), r["step"]]
                 + [mib(r["xla"][k]) for k in ("argument_size_in_bytes", "output_size_in_bytes",
                                               "alias_size_in_bytes", "temp_size_in_bytes",
                                               "generated_code_size_in_bytes",
                                               "peak_memory_in_bytes")]
                 + [mib(r["xla"]["total_bytes"]), mib(r["xla_default"]["total_bytes"]),
                    f"{r['xla']['compile_seconds']:.1f}"]
                 for r in rows]
    kind_table = []
    for r in rows:
        by = (r.get("cairn") or {}).get("at_peak_by_kind")
        if by:
            kind_table.append([r["model"], str(r["batch"]), r["step"]]
                              + [mib(sum(by.get(k, 0) for k in ks)) for _, ks in KINDS]
                              + [mib(sum(by.values()))])
    torch_table = [[r["model"], str(r["batch"]), r["step"],
                    mib(r["torch"]["live_at_start_bytes"]),
                    mib(r["torch"]["expected_live_at_start_bytes"]),
                    "yes" if r["torch"]["live_at_start_bytes"]
                    == r["torch"]["expected_live_at_start_bytes"] else "**no**",
                    mib(r["torch"]["peak_bytes"]), str(r["torch"]["allocating_threads"])]
                   for r in rows]
    def e(c, k):
        return f"{c[k]:.1e}" if k in c else "n/a"

    check_table = [[m, f"{c['param_count']:,}", f"{c['torch_param_count']:,}",
                    e(c, "output_f32"), e(c, "loss_f32"), e(c, "loss_f64"),
                    e(c, "output_after_f64"),
                    f"{e(c, 'update_f64')} ({c.get('update_worst', '-')})", e(c, "buffers_f64")]
                   + [e(c, "loss_" + p) + ("" if c.get("float32_state_" + p, True)
                                           else " (**state not float32**)") for p in halves]
                   + ["yes" if c["ok"] else "**no** " + "; ".join(c.get("problems", []))]
                   for m, c in checks.items()]
    if has_cairn:
        verdict = []
        for step in ("train", "inference"):
            sel = [r for r in rows if r["step"] == step]
            if not sel:
                continue
            under = {peer: [r for r in sel if r["cairn"]["arena_bytes"] < r[peer][key]]
                     for peer, key in (("xla", "total_bytes"), ("torch", "peak_bytes"))}
            both = [r for r in under["xla"] if r in under["torch"]]
            name = "Training step" if step == "train" else "Inference"
            verdict.append(
                f"- {name}: Cairn's plan is below both peers in {len(both)} of {len(sel)} rows "
                f"(below XLA in {len(under['xla'])}, below PyTorch in {len(under['torch'])})"
                + ("." if len(both) == len(sel) else "; not below both in: " + ", ".join(
                    f"{r['model']} b{r['batch']}" for r in sel if r not in both) + "."))
    else:
        verdict = [f"Cairn: skipped. {why}."]

    def md(head, body, left=3):
        return (["| " + " | ".join(head) + " |",
                 "|" + " --- |" * left + " ---: |" * (len(head) - left)]
                + ["| " + " | ".join(b) + " |" for b in body])

    lines = [
        "# Memory of a training step: Cairn's plan, XLA's plan, PyTorch's peak",
        "",
        f"- command: `{args.command}`",
        f"- machine: {machine()}; load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after; the run took {seconds:.0f} s",
        f"- date: {now:%Y-%m-%d %H:%M} UTC, commit {commit()}",
        f"- versions: jax {versions['jax']}, jaxlib {versions['jaxlib']} (XLA:CPU), "
        f"torch {versions['torch']} (Debian python3-torch)"
        + (f", torch {versions['torch2']} (PyPI, build/bench-torch-venv: autocast)"
           if halves else "") + "; Cairn "
        f"`{os.path.relpath(args.cairn, ROOT)}` ({versions['cairn']}, copied before the run)",
        f"- models: examples/*.cairn, {', '.join(args.models)}; batches "
        f"{', '.join(map(str, args.batches))}; "
        + ("float32 everywhere" if not halves else
           "float32, and mixed precision " + ", ".join(halves) + " (its own section)"),
        "",
        "Columns (MiB = 2^20 bytes):",
        "",
        "- **Cairn planned**: `arena_bytes` of `cairn plan examples/M.cairn --batch N --step "
        "train|forward --memory-report R.json` (summed over `devices`): the one arena the "
        "compiled step runs in, holding everything (inputs, params, buffers, optimizer state, "
        "outputs, gradients, activations, temporaries, convolution workspaces). "
        "**no-reuse**: `no_reuse_bytes`, every buffer at its own place. **lower bound**: "
        "`lower_bound_bytes`, the most bytes live at one time. **plan ms**: "
        "`planning_seconds` x 1000, the planner's own time. Inference is `--step forward`.",
        "- **XLA**: the same step in JAX (bench/memory/jax_models.py: NHWC images, HWIO "
        "kernels; training-mode forward, mean cross-entropy, jax.grad, BatchNorm running "
        "statistics, the model file's optimizer with torch.optim's rule), "
        "`jax.jit(step, donate_argnums=(params, buffers, optimizer state))`, `.lower(...)."
        "compile().memory_analysis()` on the CPU: **argument + output - alias + temp** bytes, "
        "what the executable holds while it runs (arguments: params, buffers, optimizer state, "
        "the batch, a dropout key; outputs aliased to a donated argument reuse its buffer; temp "
        "is XLA's one planned scratch allocation, reused by its heap simulator). Compiled with "
        f"`XLA_FLAGS={XLA_COMPLETE}`: by default XLA:CPU fuses chains of ops into YNNPACK "
        "subgraphs whose inner tensors are outside XLA's buffer assignment, so the analysis "
        "misses them (cnn's whole inference forward becomes one such fusion and reports 0 "
        "bytes of temp); with this flag a YNNPACK fusion holds a single convolution or dot "
        "and every tensor between ops is in the plan. The default configuration's total is "
        "listed below for reference. Inference: `jax.jit(forward)(params, buffers, image)` in "
        "eval mode, nothing donated. Labels and step counters are int32 in JAX (int64 in "
        "Cairn and PyTorch): a few bytes.",
        "- **PyTorch peak**: the most bytes live in PyTorch's CPU allocator (c10) during one "
        "step of the twin in test/reference/pytorch_models.py: `opt.zero_grad(set_to_none="
        "True)`, forward, `F.cross_entropy`, `backward()`, `opt.step()` (the model file's "
        "torch.optim optimizer, default single-tensor implementation), after one warm-up step "
        "so that the optimizer state exists; counting params, buffers, optimizer state, the "
        "previous step's gradients until zero_grad frees them, the batch, activations, "
        "gradients and temporaries (oneDNN's and im2col's scratch too: they come from the same "
        "allocator). Inference: `with torch.no_grad(): model.eval()(x)` after one warm-up "
        f"call, params, buffers and x included. {args.threads} threads. Measured, see below.",
        "- **Cairn/XLA**, **Cairn/PyTorch**: Cairn planned over the other; below 1 means "
        "Cairn needs less.",
        "- Not counted anywhere: memory the BLAS/YNNPACK/Eigen libraries keep for themselves "
        "(XLA's convolutions and dots run in YNNPACK, Eigen or oneDNN with their own scratch; "
        "Cairn's convolution workspaces are in its arena), code, the interpreters.",
        "",
    ] + verdict + [
        "",
    ] + md(header, table) + mixed_precision_section(args, all_rows, versions, selftest,
                                                   has_cairn, md) + [
        "",
        "## Where Cairn's bytes go",
        "",
        "Bytes of the buffers live at the plan's peak (`peak_index` of the report, a buffer "
        "live from `start` to `end` inclusive), by kind, unaligned (the arena also holds "
        "alignment padding): persistent = params, buffers, optimizer state, inputs, outputs; "
        "saved = forward values the backward reads.",
        "",
    ] + (md(["model", "batch", "step"] + [k for k, _ in KINDS] + ["sum"], kind_table)
         if kind_table else ["(no Cairn report)"]) + [
        "",
        "## How the numbers were checked",
        "",
        "**PyTorch measurement.** The legacy autograd profiler with `profile_memory=True` is "
        "enabled before the model is built and records each allocation and free of c10's CPU "
        "allocator with a time stamp; the running sum over these events in time order is "
        "the bytes live, and the peak is its maximum between the start and end marks "
        "(a profiler range, `torch.ops.profiler._record_function_enter/_exit`) of the "
        "measured step. Self-test on known allocations (7 MiB live before the mark; inside: "
        "10 MiB, 5 MiB, free 10, a 1024x1024 matmul of two fresh ones, free, a cat of three "
        f"1 MiB pieces): expected {selftest['expected']}, measured {selftest['measured']}: "
        f"{'exact' if selftest['ok'] else 'MISMATCH'}. In every row the bytes live at the "
        "step's start (from the events) equal the bytes of the tensors known to be live then "
        "(params, buffers, optimizer state, the warm-up step's gradients, the batch), and "
        "all allocations came from one thread (the profiler follows the autograd engine; "
        "none came from worker threads it might miss):",
        "",
    ] + md(["model", "batch", "step", "live at start (events)", "expected live at start",
            "equal", "peak", "allocating threads"], torch_table) + [
        "",
        f"**JAX models.** Per model, at batch {CHECK_BATCH}, with the PyTorch twin's initial "
        "weights (converted to NHWC/HWIO) and batch, dropout off in both: the state_dict names "
        "and shapes (in PyTorch's layout) are equal and so are the parameter counts. Errors "
        "are max|jax - torch| / max|torch|. Float32, jitted with the XLA flags measured: the "
        "eval-mode output and the training step's loss (accepted: "
        f"{OUTPUT_TOLERANCE:g}). Float64, two training steps on that batch against PyTorch's "
        "in float64 (no rounding noise, so no ReLU flips): the two losses, the eval output "
        "after them and the buffers (BatchNorm running statistics; accepted: "
        f"{F64_TOLERANCE:g}), and each parameter's change over the two steps (the optimizer "
        "update, a finer check than the weights; changes below 1e-6 of the weights' magnitude "
        f"count as zero; accepted: {UPDATE_TOLERANCE:g}, as Adam turns the rounding noise of "
        "a gradient that is 0 in exact arithmetic, like k_proj's bias under softmax, into "
        "changes of lr x noise / eps; the parameter with the largest error named). The float64 "
        "steps run op by op (`jax.disable_jit`): jitted, XLA:CPU (jaxlib 0.10.2) miscompiles "
        "cnn's float64 backward (convolution and BatchNorm gradients off by 40-50%), while "
        "its float32 gradients agree with PyTorch's to float32 rounding.",
        "",
    ] + ([f"Half steps (jitted, the same batch and weights, dropout off): **loss P** is the "
          "loss of the mixed-precision step (`compute_dtype`) against PyTorch's float64 loss "
          f"(accepted: {HALF_TOLERANCE:g}); the params, buffers and optimizer state it "
          "returns are float32 and finite.", ""] if halves else []) + md(
        ["model", "JAX params", "PyTorch params", "output f32", "loss f32", "losses f64",
         "output after f64", "update f64", "buffers f64"] + ["loss " + p for p in halves]
        + ["ok"], check_table, left=1) + [
        "",
        "## XLA's memory analysis (MiB)",
        "",
        f"With `XLA_FLAGS={XLA_COMPLETE}`, as in the table above. `peak_memory_in_bytes` is "
        "XLA's own heap-simulator figure, listed but not used (on the CPU it does not cover "
        "arguments and temp together). \"default flags\" is argument + output - alias + temp "
        "of the same step compiled with XLA's default flags, YNNPACK fusions' inner tensors "
        "not counted: not a complete figure. compile s: XLA's compile time.",
        "",
    ] + md(["model", "batch", "step", "argument", "output", "alias", "temp", "code",
            "peak_memory_in_bytes", "argument + output - alias + temp", "default flags",
            "compile s"], xla_table)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    raw = {"command": args.command, "machine": machine(), "date": f"{now:%Y-%m-%d %H:%M} UTC",
           "commit": commit(), "versions": versions, "xla_flags": XLA_COMPLETE,
           "cairn_skipped": None if has_cairn else why, "torch_selftest": selftest,
           "jax_checks": checks, "precisions": args.precisions, "half_goal": HALF_GOAL,
           "rows": all_rows}
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    print("\n".join(lines))
    print(f"\nwrote {out} and {os.path.splitext(out)[0]}.json")


def mixed_precision_section(args, rows, versions, selftest, has_cairn, md):
    """The results file's lines on the half precisions (none without them): per row, Cairn's
    arena and activations against float32's, PyTorch under autocast, XLA in mixed
    precision."""
    halves = args.precisions[1:]
    if not halves:
        return []
    f32 = {(r["model"], r["batch"], r["step"]): r for r in rows if r["precision"] == "f32"}

    def cairn_of(r):
        c = r.get("cairn")
        return c if c and "refused" not in c else None

    def torch_of(r):
        t = r.get("torch_amp") or {}
        return t.get("peak_bytes")

    table, refusals, goal = [], {}, {p: [] for p in halves}
    for r in rows:
        ref = f32[(r["model"], r["batch"], r["step"])]
        c, c32 = cairn_of(r), cairn_of(ref)
        arena = c["arena_bytes"] if c else None
        act = c["act_temp_bytes"] if c else None
        meets = "-"
        if r["precision"] != "f32" and c and c32:
            share = act / c32["act_temp_bytes"]
            meets = "yes" if share <= HALF_GOAL else "**no**"
            goal[r["precision"]].append(
                (r, share, arena / c32["arena_bytes"],
                 c["act_temp_at_peak_bytes"] / c32["act_temp_at_peak_bytes"],
                 c["by_kind"].get("saved", 0) / max(c32["by_kind"].get("saved", 0), 1)))
        refused = None
        if r.get("cairn") and "refused" in r["cairn"]:
            refusals.setdefault(r["cairn"]["refused"], []).append(r)
            refused = f"refused ({list(refusals).index(r['cairn']['refused']) + 1})"
        note = "-" if refused else None
        pt, xla = torch_of(r), r["xla"]["total_bytes"]
        pt_note = "error" if (r.get("torch_amp") or {}).get("error") else None
        table.append([
            r["model"], str(r["batch"]), r["step"], r["precision"],
            refused or mib(arena), note or ratio(arena, c32 and c32["arena_bytes"]),
            note or mib(act), note or ratio(act, c32 and c32["act_temp_bytes"]),
            note or ratio(c and c["act_temp_at_peak_bytes"],
                          c32 and c32["act_temp_at_peak_bytes"]),
            note or ratio(c and c["by_kind"].get("saved", 0),
                          c32 and c32["by_kind"].get("saved", 0)),
            meets, pt_note or mib(pt), pt_note or ratio(pt, torch_of(ref)),
            mib(xla), ratio(xla, ref["xla"]["total_bytes"]),
            ratio(arena, pt), ratio(arena, xla)])
    verdict = []
    for p in halves:
        got = goal[p]
        refused = [r for r in rows if r["precision"] == p and r.get("cairn")
                   and "refused" in r["cairn"]]
        if refused:
            verdict.append(f"- {p}: `cairn plan --precision {p}` refused, in "
                           f"{len(refused)} of {len(refused) + len(got)} rows: "
                           f"\"{refused[0]['cairn']['refused']}\"")
        if not got:
            continue
        met = [g for g in got if g[1] <= HALF_GOAL]

        def span(i):
            return f"{min(g[i] for g in got):.3f} to {max(g[i] for g in got):.3f}"
        verdict.append(
            f"- {p}: Cairn's activations and temporaries (all such buffers) are at most "
            f"{HALF_GOAL} of float32's in {len(met)} of {len(got)} rows ("
            + ", ".join(f"{r['model']} b{r['batch']} {r['step']} {g[1]:.3f}"
                        for g in got for r in [g[0]]) + ")"
            + ("" if len(met) == len(got) else "; not met in: " + ", ".join(
                f"{g[0]['model']} b{g[0]['batch']} {g[0]['step']}" for g in got
                if g[1] > HALF_GOAL))
            + f". Those live at the peak: {span(3)} of float32's; saved activations alone: "
            f"{span(4)}; the whole arena: {span(2)}.")
    torch2 = versions.get("torch2", "2.x")
    check = [[r["model"], str(r["batch"]), r["step"], r["precision"],
              mib(t["live_at_start_bytes"]), mib(t["expected_live_at_start_bytes"]),
              "yes" if t["live_at_start_bytes"] == t["expected_live_at_start_bytes"]
              else "**no**", mib(t["peak_bytes"]), str(t["allocating_threads"])]
             for r in rows for t in [r.get("torch_amp") or {}] if "peak_bytes" in t]
    errors = [f"- {r['model']} b{r['batch']} {r['step']} {r['precision']}: "
              f"{r['torch_amp']['error']}" for r in rows
              if (r.get("torch_amp") or {}).get("error")]
    xla_table = [[r["model"], str(r["batch"]), r["step"], r["precision"]]
                 + [mib(r["xla"][k]) for k in ("argument_size_in_bytes", "output_size_in_bytes",
                                               "alias_size_in_bytes", "temp_size_in_bytes")]
                 + [mib(r["xla"]["total_bytes"]), f"{r['xla']['compile_seconds']:.1f}"]
                 for r in rows]
    dtype_table = [[r["model"], str(r["batch"]), r["step"], r["precision"]]
                   + [mib(c["by_dtype"].get(t, 0)) for t in ("F32", "BF16", "F16", "I64")]
                   + [mib(sum(c["by_kind"].get(k, 0) for k in ks)) for _, ks in KINDS]
                   for r in rows for c in [cairn_of(r)] if c]
    st = selftest.get("torch2", {})
    lines = [
        "",
        "## Mixed precision",
        "",
        "One row per model, batch, step and precision; every ratio \"/ f32\" is against the "
        "float32 row of the same model, batch and step, measured by the same system.",
        "",
        "- **Cairn arena**: `arena_bytes` of `cairn plan ... --precision P --memory-report "
        "R.json` (float32: no flag, the table above). **act+temp**: the bytes of every "
        "buffer of the report whose kind is not param, buffer, optimizer, grad, input or "
        "output (i.e. activation, saved, temp and workspace: the saved activations and the "
        "temporaries), all such buffers summed; **at peak / f32**: the same for those live "
        "at the plan's peak only; **saved / f32**: the `saved` buffers alone (forward "
        "values the backward reads), all summed, what test/tools/precision.test bounds. "
        f"**goal**: act+temp / f32 <= {HALF_GOAL} (issue 13). Summed over all buffers, a "
        "figure counts every buffer once however the plan reuses bytes (a no-reuse "
        "figure); at the peak, what the arena holds at once.",
        f"- **PyTorch**: the peak as above, in PyTorch {torch2} from PyPI (Debian's torch "
        "1.13 has no float16 CPU autocast), forward and cross-entropy under "
        "`torch.autocast(device_type=\"cpu\", dtype=torch.bfloat16|torch.float16)`, "
        "`backward()` and `opt.step()` outside it (float32 master weights, gradients and "
        "optimizer state); inference `torch.no_grad()` and autocast. Its f32 row is the same "
        f"torch {torch2} without autocast (the table above uses Debian's torch). "
        f"{args.threads} threads.",
        "- **XLA**: argument + output - alias + temp as above, of the step in mixed "
        "precision (jax_models.py's `compute_dtype`, as jmp's policy params=float32, "
        "compute=P, output=float32): the float32 master params (norms' aside) and the image "
        "cast to P inside the jitted step, batch norm and layer norm in float32 on their "
        "half input with float32 parameters and statistics, softmax in float32, the logits "
        "cast to float32 for the loss; float32 gradients (the cast's transpose) and "
        "optimizer update. No loss scaling for f16 (it changes no buffer's size).",
        "- **Cairn/PyTorch**, **Cairn/XLA**: Cairn's arena over the other's figure in the "
        "same row; below 1 means Cairn needs less.",
        "",
    ] + (verdict if has_cairn else ["Cairn: skipped."]) + [
        "",
    ] + md(["model", "batch", "step", "precision", "Cairn arena (MiB)", "arena / f32",
            "act+temp (MiB)", "act+temp / f32", "at peak / f32", "saved / f32", "goal",
            "PyTorch peak (MiB)", "PyTorch / f32", "XLA (MiB)", "XLA / f32", "Cairn/PyTorch",
            "Cairn/XLA"], table, left=4) + [""] + [
        f"({i + 1}) `cairn plan --precision ...` exited with an error: \"{msg}\" "
        f"({', '.join(sorted({r['precision'] for r in rs}))})"
        for i, (msg, rs) in enumerate(refusals.items())] + (
        ["", "PyTorch errors:", ""] + errors if errors else []) + [
        "",
        "Cairn's buffers by element type (`dtype`) and by kind, all buffers summed (MiB; "
        "persistent = params, buffers, optimizer state, inputs, outputs):",
        "",
    ] + md(["model", "batch", "step", "precision", "F32", "BF16", "F16", "I64"]
           + [k for k, _ in KINDS], dtype_table, left=4) + [
        "",
        f"PyTorch {torch2}'s measurement (the same legacy profiler as above), self-test: "
        f"expected {st.get('expected')}, measured "
        f"{st.get('measured')}: {'exact' if st.get('ok') else 'MISMATCH'}; in each row the "
        "bytes live at the step's start against the tensors known to be live then:",
        "",
    ] + md(["model", "batch", "step", "precision", "live at start (events)",
            "expected live at start", "equal", "peak", "allocating threads"], check,
           left=4) + [
        "",
        "XLA's memory analysis of the mixed-precision steps (MiB; with "
        f"`XLA_FLAGS={XLA_COMPLETE}`):",
        "",
    ] + md(["model", "batch", "step", "precision", "argument", "output", "alias", "temp",
            "argument + output - alias + temp", "compile s"], xla_table, left=4)
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run", help="the whole benchmark; writes the results files")
    r.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    r.add_argument("--torch-python", default="/usr/bin/python3")
    r.add_argument("--models", nargs="+", default=EXAMPLES, choices=EXAMPLES)
    r.add_argument("--batches", nargs="+", type=int, default=[64, 256])
    r.add_argument("--steps", nargs="+", default=["train", "inference"],
                   choices=["train", "inference"])
    r.add_argument("--precisions", nargs="+", default=["f32"], choices=PRECISIONS,
                   help="f32 (default) and the half precisions to plan and measure; a half "
                        "precision always comes with its float32 reference")
    r.add_argument("--torch2-python",
                   default=os.path.join(ROOT, "build", "bench-torch-venv", "bin", "python"),
                   help="PyTorch 2.x for autocast (half precisions; run.sh makes it)")
    r.add_argument("--out", help="results file (default bench/results/memory-DATE.md, "
                                 "memory-DATE-quick.md for a subset)")
    r.add_argument("--command", default="bench/memory/run.sh", help="for the results file")
    r.add_argument("--keep", action="store_true",
                   help="keep the work directory (Cairn's reports, the reference .npz files)")
    t = sub.add_parser("torch", help="PyTorch's peak bytes (JSON)")
    j = sub.add_parser("jax", help="XLA's memory analysis (JSON)")
    for p in (t, j):
        p.add_argument("--model", required=True)
        p.add_argument("--batch", type=int, required=True)
        p.add_argument("--step", choices=["train", "inference"], required=True)
        p.add_argument("--precision", choices=PRECISIONS, default="f32",
                       help="bf16, f16: mixed precision (PyTorch: autocast)")
    tr = sub.add_parser("torch-ref", help="the PyTorch twin's numbers for jax-check (.npz)")
    tr.add_argument("--batch", type=int, default=CHECK_BATCH)
    jc = sub.add_parser("jax-check", help="the JAX model against torch-ref's .npz (JSON)")
    for p in (tr, jc):
        p.add_argument("--model", required=True)
        p.add_argument("--ref", required=True)
    jc.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=["f32"],
                    help="also run each half step on the batch")
    sub.add_parser("torch-selftest", help="the PyTorch measurement on known allocations")
    sub.add_parser("version", help="torch's version (JSON)")
    for p in (r, t):
        p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    for p in (r, t, j, tr, jc):
        p.add_argument("--examples", default=os.path.join(ROOT, "examples"))
    args = ap.parse_args()
    if args.mode == "run":
        run(args)
        return
    if args.mode == "version":
        import torch
        result = {"torch": torch.__version__}
    else:
        result = {"torch": torch_peak, "torch-selftest": torch_selftest,
                  "torch-ref": torch_reference, "jax": jax_memory,
                  "jax-check": jax_check}[args.mode](args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
