#!/usr/bin/python3
"""What the middle end changed: arenas, kernels, fusion and CPU step time against "before".

  bench.py [--before CAIRN | --before-ref REF] [--after CAIRN] [--models a,b]
           [--steps N] [--rounds R] [--out FILE]

Three compilers, one column each: "before" (--before-ref REF, default e71379c, the last
commit before the middle end became a pipeline of passes, built here: see below; or
--before CAIRN, a prebuilt cairn binary whose executables link whatever runtime it was
built against), "after" (--after, default build/bin/cairn) and "after --no-fuse" (the same
cairn without cairn-fuse-elementwise).

0. Executables. Right after the after cairn is copied (see the end), `cairn build
   examples/X.cairn -o EXE` (and --no-fuse) for every model and compiler, before anything
   is planned or timed.
1. Plans. `cairn plan examples/X.cairn --batch N --memory-report R.json` (and --no-fuse for
   the third column) at batch 64 and 256 (--batches): devices[0].arena_bytes and
   lower_bound_bytes in one table (with after/before, no-fuse/before and arena/lower
   bound), and the number of kernels, len(devices[0].schedule) (the training step and the
   forward step together), one row per model (it does not depend on the batch; a note says
   so when it does).
2. Fusion, after build only, at each example's own batch: `cairn build examples/X.cairn
   --emit=mlir --stop-after=fuse`, per step (train_step, forward) the number of
   cairn.kernel.elementwise_chain ops and of cairn.kernel.linear ops with relu = true, and
   the training step's chains grouped by their ops list, with counts.
3. CPU step time at each example's own batch, `EXE train --steps N --seed 0 --threads 1
   --data DIR --metrics M.json` with the executables of 0. The metrics' "seconds" is the
   training loop alone (no loading, saving or evaluation) but holds the first step's page
   faults and warm-up, so a step's time is the difference of two runs, `--steps W+N` minus
   `--steps W` (W = --warmup, 1), over N. N is --steps, or by default per model the steps a
   run needs to take about --target-seconds (2), from a calibration run of the before build
   (at least 3). The three builds are timed round-robin, R rounds (--rounds, 5), each round
   starting with the next build in turn, since other work on a shared machine slows
   whichever runs beside it; the table gives the median ms/step of each, and as
   after/before and after/no-fuse the median over the rounds of that round's ratio (after_r
   / before_r, after_r / nofuse_r), so that load shared by a round's runs cancels.
   Data: the first 4096 Fashion-MNIST training images as .npy (uint8) for models whose
   image input has 784 elements per example (28x28, whatever its shape: 1x28x28 here),
   seeded random uint8 images and labels of the model's input shape (16 batches) for the
   others (resnet18: 3x32x32); no test split, so no evaluation runs.
4. Nothing changes. The first round's longer runs save their weights (--save); the after
   and no-fuse builds' tensors must equal the before build's, name by name, byte for byte.
   The script exits 1 after writing the results when any differ.

--before-ref REF builds REF in a git worktree, /tmp/cairn-before-SHA (kept and reused; `git
worktree remove` it when done), with the CMake flags of that worktree's own
scripts/build.sh (configured when it has no CMakeCache.txt yet), targets cairn and the
runtime libraries that `cairn build -o` links from its build directory (CairnRuntime,
CairnKernels, CairnCpuBackend: codegen/CMakeLists.txt's BuildConfig). 3 to 15 minutes on 2
cores the first time, depending on the compiler cache. --before CAIRN instead takes a
prebuilt binary as it is: its executables link the runtime libraries and headers of the
build directory it was built in, whatever they hold now.

What a rebuild of build/ during the run can change: --after is copied into the work
directory first (waiting while it is missing or not yet executable), so every plan, IR and
executable comes from one compiler. The copy protects the compiler only: the executables
`cairn build -o` makes link build/'s runtime libraries and headers, which is why every
model's executables (all three compilers) are built right after the copy, before any
plan or timing; a rebuild of build/ after that changes nothing measured, one during that
first phase can. A failed `cairn build -o` is retried a few times (build/'s libraries may
be briefly missing); plan, check and --emit are deterministic and not retried.
"""
import argparse
import collections
import datetime
import gzip
import json
import os
import re
import shlex
import shutil
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import commit, cpu_name  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
FASHION = "/usr/share/datasets/fashion-mnist"
DEFAULT_BEFORE_REF = "e71379c"
VARIANTS = ["before", "after", "no-fuse"]  # the three columns
LABELS = {"before": "before", "after": "after", "no-fuse": "after --no-fuse"}
MiB = 1 << 20


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, retries=0, wait=30, **kw):
    """Runs cmd (strings), raising with its stderr on failure; retries `retries` times."""
    cmd = [str(c) for c in cmd]
    for attempt in range(retries + 1):
        p = subprocess.run(cmd, capture_output=True, text=True, **kw)
        if p.returncode == 0:
            return p.stdout
        if attempt < retries:
            log(f"  failed (exit {p.returncode}), retrying in {wait} s: {shlex.join(cmd)}\n"
                f"  {p.stderr.strip()[-500:]}")
            time.sleep(wait)
    raise RuntimeError(f"exit {p.returncode}: {shlex.join(cmd)}\n{p.stdout[-2000:]}"
                       f"{p.stderr[-4000:]}")


def wait_for(path, seconds=900):
    """Waits while `path` is missing or not executable (another build may be replacing it)."""
    deadline = time.time() + seconds
    while not os.access(path, os.X_OK):
        if time.time() > deadline:
            raise SystemExit(f"{path} did not appear within {seconds} s")
        log(f"waiting for {path} ...")
        time.sleep(15)


# --- the before compiler from a git ref -----------------------------------------------------

def build_flags(tree):
    """The cmake_flags array of `tree`'s scripts/build.sh, as a list (-S . -B build:
    relative to the checkout, so cmake runs there)."""
    with open(os.path.join(tree, "scripts", "build.sh")) as f:
        text = f.read()
    start = text.index("cmake_flags=(") + len("cmake_flags=(")
    return shlex.split(text[start:text.index(")", start)], comments=True)


def build_ref(ref):
    """Builds `ref` in a worktree under /tmp; the path of its cairn and the full commit."""
    git = ["git", "-C", ROOT]
    sha = run(git + ["rev-parse", "--verify", ref + "^{commit}"]).strip()
    tree = f"/tmp/cairn-before-{sha[:12]}"
    build = os.path.join(tree, "build")
    if not os.path.exists(os.path.join(tree, ".git")):
        log(f"git worktree add {tree} {sha[:12]}")
        run(git + ["worktree", "add", "--detach", tree, sha])
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):  # the flags are the ref's
        log("configuring " + build)
        run(["cmake"] + build_flags(tree), cwd=tree)
    log(f"building {ref} ({sha[:12]}) in {build}: cairn and the runtime libraries "
        "(the first time takes a while)")
    t0 = time.time()
    subprocess.run(["cmake", "--build", build, "-j", str(os.cpu_count() or 1), "--target",
                    "cairn", "CairnRuntime", "CairnKernels", "CairnCpuBackend"], check=True,
                   stdout=sys.stderr)
    log(f"built in {time.time() - t0:.0f} s")
    return os.path.join(build, "bin", "cairn"), sha


# --- data ------------------------------------------------------------------------------------

def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def fashion_subset(work, count=4096):
    d = os.path.join(work, "data-fashion-mnist")
    if not os.path.exists(os.path.join(d, "train_labels.npy")):
        os.makedirs(d, exist_ok=True)
        images = read_idx(os.path.join(FASHION, "train-images-idx3-ubyte.gz"))[:count]
        labels = read_idx(os.path.join(FASHION, "train-labels-idx1-ubyte.gz"))[:count]
        np.save(os.path.join(d, "train_images.npy"), np.ascontiguousarray(images))
        np.save(os.path.join(d, "train_labels.npy"), labels.astype(np.int64))
    return d


def synthetic(work, shape, classes, count):
    d = os.path.join(work, "data-random-" + "x".join(map(str, shape)) + f"-{classes}")
    if not os.path.exists(os.path.join(d, "train_labels.npy")):
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(0)
        np.save(os.path.join(d, "train_images.npy"),
                rng.integers(0, 256, (count,) + tuple(shape), dtype=np.uint8))
        np.save(os.path.join(d, "train_labels.npy"),
                rng.integers(0, classes, count).astype(np.int64))
    return d


def model_data(work, cairn, model):
    """(data dir, its description, default batch) for a model, from `cairn check --json`."""
    info = json.loads(run([cairn, "check", os.path.join(EXAMPLES, model + ".cairn"), "--json"]))
    image = next(i for i in info["inputs"] if i["dtype"].startswith(("f", "bf")))
    shape = image["shape"][1:]
    classes = info["layers"][-1]["shape"][-1]
    batch = info["batch"]
    if int(np.prod(shape)) == 28 * 28:
        return fashion_subset(work), "Fashion-MNIST, first 4096", batch
    return (synthetic(work, shape, classes, 16 * batch),
            f"random uint8 {'x'.join(map(str, shape))}, {16 * batch}", batch)


# --- safetensors -----------------------------------------------------------------------------

def read_safetensors(path):
    """{name: (dtype, shape, bytes)}."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: (v["dtype"], tuple(v["shape"]), data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}


def compare_weights(a_path, b_path):
    """'' when the two files hold the same tensors byte for byte, else what differs."""
    a, b = read_safetensors(a_path), read_safetensors(b_path)
    problems = []
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b))
        problems.append(f"names differ ({len(only)}: {', '.join(only[:3])})")
    differ = []
    for name in sorted(set(a) & set(b)):
        (da, sa, ba), (db, sb, bb) = a[name], b[name]
        if (da, sa) != (db, sb):
            differ.append(f"{name} ({da}{list(sa)} vs {db}{list(sb)})")
        elif ba != bb:
            if da == "F32":
                x, y = np.frombuffer(ba, np.float32), np.frombuffer(bb, np.float32)
                differ.append(f"{name} (max |diff| {np.max(np.abs(x - y)):.3g})")
            else:
                differ.append(name)
    if differ:
        problems.append(f"{len(differ)} of {len(a)} tensors differ: " + ", ".join(differ[:3])
                        + (" ..." if len(differ) > 3 else ""))
    return "; ".join(problems)


# --- the measurements ------------------------------------------------------------------------

def model_file(model):
    return os.path.join(EXAMPLES, model + ".cairn")


def build_executables(args, cairns, work):
    """Builds every model's executable with each compiler, before anything is measured:
    {model: {"data", "data_text", "batch", "exes": {variant: path}}}."""
    models = {}
    for model in args.models:
        mdir = os.path.join(work, model)
        os.makedirs(mdir, exist_ok=True)
        data, data_text, batch = model_data(work, cairns["after"], model)
        exes = {}
        for v in VARIANTS:
            exes[v] = os.path.join(mdir, f"{model}-{v}")
            if os.path.exists(exes[v]):
                os.remove(exes[v])  # never time one left by an earlier run
            run([cairns[v], "build", model_file(model), "-o", exes[v]]
                + (["--no-fuse"] if v == "no-fuse" else []), retries=3)
        log(f"built {model}: " + ", ".join(VARIANTS))
        models[model] = {"data": data, "data_text": data_text, "batch": batch, "exes": exes}
    return models


def plans(args, cairns, work):
    """{(model, batch, variant): device 0 of the memory report}."""
    out = {}
    for model in args.models:
        for batch in args.batches:
            for v in VARIANTS:
                report = os.path.join(work, "plans", f"{model}-{batch}-{v}.json")
                os.makedirs(os.path.dirname(report), exist_ok=True)
                run([cairns[v], "plan", model_file(model), "--batch", batch,
                     "--memory-report", report] + (["--no-fuse"] if v == "no-fuse" else []))
                with open(report) as f:
                    out[model, batch, v] = json.load(f)["devices"][0]
            log(f"plan {model} {batch}: arena " + " / ".join(
                f"{out[model, batch, v]['arena_bytes'] / MiB:.2f}" for v in VARIANTS) + " MiB")
    return out


STEP_RE = re.compile(r"^(\s*)cairn\.step\s+@?([\w.]+)")
KERNEL_RE = re.compile(r"^\s*cairn\.kernel\.(\w+)\b")
CHAIN_OPS_RE = re.compile(r"\bops = (\[[^\]]*\])")
RELU_RE = re.compile(r"[{,]\s*relu = true\b")


def fusion_counts(text):
    """From `--emit=mlir --stop-after=fuse` IR: {step: {"chains": n, "linear_relu": n,
    "chain_ops": Counter of the chains' ops lists}}, kernels outside a step under "-"."""
    steps = {}
    step, indent = "-", None
    for line in text.splitlines():
        m = STEP_RE.match(line)
        if m:
            step, indent = m.group(2), m.group(1)
            continue
        if indent is not None and line.startswith(indent + "}"):
            step, indent = "-", None
            continue
        k = KERNEL_RE.match(line)
        if not k:
            continue
        c = steps.setdefault(step, {"chains": 0, "linear_relu": 0,
                                    "chain_ops": collections.Counter()})
        if k.group(1) == "elementwise_chain":
            c["chains"] += 1
            ops = CHAIN_OPS_RE.search(line)
            c["chain_ops"][ops.group(1) if ops else "?"] += 1
        elif k.group(1) == "linear" and RELU_RE.search(line):
            c["linear_relu"] += 1
    return steps


def fusion(args, cairn, work):
    """Per model, the after build's fusion at the model's own batch: (batch, fusion_counts)."""
    out = {}
    for model in args.models:
        text = run([cairn, "build", model_file(model), "--emit=mlir", "--stop-after=fuse"])
        path = os.path.join(work, "ir", f"{model}-fuse.mlir")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        batch = re.search(r"cairn\.batch = (\d+)", text)
        out[model] = (int(batch.group(1)) if batch else None, fusion_counts(text))
        log(f"fusion {model}: " + ", ".join(
            f"{st} {c['chains']} chains, {c['linear_relu']} linear+relu"
            for st, c in out[model][1].items()))
    return out


def train(exe, data, steps, metrics, save=None):
    cmd = [exe, "train", "--steps", steps, "--seed", 0, "--threads", 1, "--data", data,
           "--metrics", metrics, "--log-every", 1000000000]
    if save:
        cmd += ["--save", save]
    run(cmd)
    with open(metrics) as f:
        return json.load(f)


def step_times(args, built, work):
    """Per model: default batch, data, steps, per-variant ms/step lists (one per round) and
    weight checks, timing the executables of build_executables."""
    results = {}
    for model in args.models:
        mdir = os.path.join(work, model)
        b = built[model]
        data, exes = b["data"], b["exes"]
        warm = args.warmup
        if args.steps:
            steps = args.steps
        else:  # calibrate on the before build
            m = train(exes["before"], data, 2, os.path.join(mdir, "calibrate.json"))
            steps = max(3, min(5000, round(args.target_seconds / (m["seconds"] / 2))))
        log(f"{model}: batch {b['batch']}, {steps} steps timed after {warm}, "
            f"{args.rounds} rounds")
        times = {v: [] for v in VARIANTS}
        blas = "?"
        for r in range(args.rounds):
            order = VARIANTS[r % 3:] + VARIANTS[:r % 3]
            for v in order:
                m0 = train(exes[v], data, warm, os.path.join(mdir, f"{v}-warm.json"))
                save = os.path.join(mdir, f"{v}.safetensors") if r == 0 else None
                m1 = train(exes[v], data, warm + steps, os.path.join(mdir, f"{v}-long.json"),
                           save)
                times[v].append(1000 * (m1["seconds"] - m0["seconds"]) / steps)
                blas = m1.get("blas_core") or blas
            log(f"  round {r + 1}: " + ", ".join(f"{v} {times[v][-1]:.3f}" for v in VARIANTS)
                + " ms/step")
        checks = {}
        for v in ("after", "no-fuse"):
            checks[v] = compare_weights(os.path.join(mdir, "before.safetensors"),
                                        os.path.join(mdir, f"{v}.safetensors"))
            if checks[v]:  # does initialisation already differ?
                for w in ("before", v):
                    run([exes[w], "init", "--seed", 0, "--save",
                         os.path.join(mdir, f"{w}-init.safetensors")])
                init = compare_weights(os.path.join(mdir, "before-init.safetensors"),
                                       os.path.join(mdir, f"{v}-init.safetensors"))
                checks[v] += "; initial weights " + ("differ too" if init else "identical")
                log(f"  WEIGHTS DIFFER, {v} vs before: {checks[v]}")
        results[model] = {"batch": b["batch"], "data": b["data_text"], "steps": steps,
                          "warm": warm, "times": times, "checks": checks, "blas": blas}
    return results


# --- the report ------------------------------------------------------------------------------

def ratio(a, b):
    return f"{a / b:.4f}" if b else "-"


def paired_ratio(a, b):
    """The median over rounds of a_r / b_r."""
    pairs = [x / y for x, y in zip(a, b) if y]
    return f"{statistics.median(pairs):.4f}" if pairs else "-"


def plan_tables(args, p):
    lines, notes = [], []
    mib = lambda x: f"{x / MiB:.3f}"  # noqa: E731
    lines += ["", "### Arena and lower bound (MiB): devices[0].arena_bytes and "
              "lower_bound_bytes", "",
              "| model | batch | arena: before | after | after --no-fuse | after/before "
              "| no-fuse/before | lower bound: before | after | after --no-fuse "
              "| arena/lower bound: before / after / no-fuse |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for model in args.models:
        for batch in args.batches:
            d = {v: p[model, batch, v] for v in VARIANTS}
            arena = {v: d[v]["arena_bytes"] for v in VARIANTS}
            lower = {v: d[v]["lower_bound_bytes"] for v in VARIANTS}
            lines.append(f"| {model} | {batch} | " + " | ".join(mib(arena[v]) for v in VARIANTS)
                         + f" | {ratio(arena['after'], arena['before'])} "
                         f"| {ratio(arena['no-fuse'], arena['before'])} | "
                         + " | ".join(mib(lower[v]) for v in VARIANTS) + " | "
                         + " / ".join(ratio(arena[v], lower[v]) for v in VARIANTS) + " |")
            for name, val in (("arena", arena), ("lower bound", lower)):
                for v in ("after", "no-fuse"):
                    if val[v] > val["before"]:
                        notes.append(f"{name} grew: {model} batch {batch}, {LABELS[v]} "
                                     f"{val[v]} > before {val['before']}")
    batches = ", ".join(map(str, args.batches))
    lines += ["", "### Kernels: len(devices[0].schedule), training step and forward step "
              f"(the same at every batch planned, {batches}, unless a note says otherwise)", "",
              "| model | before | after | after --no-fuse | after/before | no-fuse/before |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for model in args.models:
        counts = {v: [len(p[model, b, v]["schedule"]) for b in args.batches] for v in VARIANTS}
        for v in VARIANTS:
            if len(set(counts[v])) > 1:
                notes.append(f"kernel count depends on the batch: {model}, {LABELS[v]}: "
                             + ", ".join(f"{n} at {b}" for n, b in zip(counts[v], args.batches)))
        cell = {v: " / ".join(map(str, dict.fromkeys(counts[v]))) for v in VARIANTS}
        val = {v: counts[v][0] for v in VARIANTS}
        lines.append(f"| {model} | " + " | ".join(cell[v] for v in VARIANTS)
                     + f" | {ratio(val['after'], val['before'])} "
                     f"| {ratio(val['no-fuse'], val['before'])} |")
        for v in ("after", "no-fuse"):
            for n, b in zip(counts[v], counts["before"]):
                if n > b:
                    notes.append(f"kernel count grew: {model}, {LABELS[v]} {n} > before {b}")
                    break
    return lines, notes


def fusion_table(args, fu):
    lines = ["", "### Fusion (after, each example's own batch): `cairn build examples/X.cairn "
             "--emit=mlir --stop-after=fuse`", "",
             "| model | batch | elementwise_chain: train_step | forward "
             "| linear relu = true: train_step | forward "
             "| train_step's chains by ops (count) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    notes = []
    empty = {"chains": 0, "linear_relu": 0, "chain_ops": collections.Counter()}
    for model in args.models:
        batch, steps = fu[model]
        tr, fwd = steps.get("train_step", empty), steps.get("forward", empty)
        groups = "; ".join(f"`{ops}` x{n}" for ops, n in
                           sorted(tr["chain_ops"].items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"| {model} | {batch} | {tr['chains']} | {fwd['chains']} "
                     f"| {tr['linear_relu']} | {fwd['linear_relu']} | {groups or '-'} |")
        other = sorted(set(steps) - {"train_step", "forward"})
        if other:
            notes.append(f"fusion: {model} has kernels in steps not in the table: "
                         + ", ".join(other))
    return lines, notes


def step_table(args, s):
    lines = ["", "### CPU step time (ms/step, median of the rounds; after/before and "
             "after/no-fuse: median over the rounds of that round's ratio; "
             "spread = (max - min) / median)",
             "", "| model | batch | data | steps timed | before | after | after --no-fuse "
             "| after/before | after/no-fuse | spread before / after / no-fuse "
             "| weights: after = before | weights: no-fuse = before |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    notes = []
    for model in args.models:
        r = s[model]
        t = r["times"]
        med = {v: statistics.median(t[v]) for v in VARIANTS}
        spread = " / ".join(f"{100 * (max(t[v]) - min(t[v])) / med[v]:.0f}%"
                            for v in VARIANTS)
        check = {v: "identical" if not r["checks"][v] else "**DIFFER**: " + r["checks"][v]
                 for v in ("after", "no-fuse")}
        lines.append(f"| {model} | {r['batch']} | {r['data']} | {r['steps']} | "
                     + " | ".join(f"{med[v]:.3f}" for v in VARIANTS)
                     + f" | {paired_ratio(t['after'], t['before'])} "
                     f"| {paired_ratio(t['after'], t['no-fuse'])} | {spread} "
                     f"| {check['after']} | {check['no-fuse']} |")
        for v in ("after", "no-fuse"):
            if r["checks"][v]:
                notes.append(f"weights differ: {model}, {LABELS[v]} vs before: {r['checks'][v]}")
    return lines, notes


def copy_after(path, dest, seconds=900):
    """Copies the after cairn to dest once it is there and runs (`--version`)."""
    deadline = time.time() + seconds
    while True:
        wait_for(path, seconds)
        shutil.copy2(path, dest)
        if subprocess.run([dest, "--version"], capture_output=True).returncode == 0:
            return
        if time.time() > deadline:
            raise SystemExit(f"{path} --version failed for {seconds} s")
        log(f"{path} does not run yet (being rebuilt?); copying again in 15 s")
        time.sleep(15)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    before = ap.add_mutually_exclusive_group()
    before.add_argument("--before", metavar="CAIRN",
                        help="a prebuilt cairn binary, used as it is: its executables link "
                        "the runtime libraries and headers of the build it was made in")
    before.add_argument("--before-ref", metavar="REF",
                        help="build this commit in a git worktree /tmp/cairn-before-SHA "
                        f"(the default, {DEFAULT_BEFORE_REF}, when neither is given)")
    ap.add_argument("--after", default=os.path.join(ROOT, "build", "bin", "cairn"))
    ap.add_argument("--models", help="comma-separated (default: every examples/*.cairn)")
    ap.add_argument("--batches", default="64,256", help="plan batches (default 64,256)")
    ap.add_argument("--steps", type=int, help="steps timed per run (default: per model, "
                    "about --target-seconds)")
    ap.add_argument("--target-seconds", type=float, default=2.0)
    ap.add_argument("--warmup", type=int, default=1, help="steps of the shorter run (1)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", default="/tmp/cairn-bench-middle-end")
    ap.add_argument("--out", help="results file (default bench/results/middle-end-DATE.md)")
    ap.add_argument("--command", default="bench/middle_end/run.sh", help="for the results file")
    args = ap.parse_args()
    all_models = sorted(f[:-6] for f in os.listdir(EXAMPLES) if f.endswith(".cairn"))
    args.models = args.models.split(",") if args.models else all_models
    for m in args.models:
        if m not in all_models:
            ap.error(f"no examples/{m}.cairn")
    args.batches = [int(b) for b in args.batches.split(",")]
    if args.rounds < 1 or (args.steps is not None and args.steps < 1) or args.warmup < 1:
        ap.error("--rounds, --steps and --warmup must be at least 1")

    date = datetime.date.today().isoformat()
    out = args.out or os.path.join(ROOT, "bench", "results", f"middle-end-{date}.md")
    os.makedirs(args.work, exist_ok=True)
    if args.before:
        before = os.path.abspath(args.before)
        before_text = (f"`{args.before}` (--before; a prebuilt compiler; its executables link "
                       "the runtime it was built with)")
        if not os.access(before, os.X_OK):
            ap.error(f"--before {args.before}: not an executable")
    else:
        ref = args.before_ref or DEFAULT_BEFORE_REF
        before, sha = build_ref(ref)
        before_text = f"`{before}`, built from {ref} = {sha[:12]} (--before-ref)"
    after = os.path.join(args.work, "cairn-after")
    copy_after(args.after, after)  # the compiler only: executables link build/'s runtime
    cairns = {"before": before, "after": after, "no-fuse": after}

    load = os.getloadavg()
    t0 = time.time()
    built = build_executables(args, cairns, args.work)  # all of them, before any timing
    p = plans(args, cairns, args.work)
    fu = fusion(args, after, args.work)
    s = step_times(args, built, args.work)
    elapsed = time.time() - t0
    plan_lines, plan_notes = plan_tables(args, p)
    fusion_lines, fusion_notes = fusion_table(args, fu)
    step_lines, step_notes = step_table(args, s)
    notes = plan_notes + fusion_notes + step_notes
    blas = sorted({r["blas"] for r in s.values()})
    lines = [
        "# Middle end: arenas, kernels, fusion and CPU step time, before against after",
        "",
        f"- command: `{args.command}`",
        f"- machine: {cpu_name()}, {os.cpu_count()} cores; load average before the run "
        f"{load[0]:.2f}, after {os.getloadavg()[0]:.2f} (other work on the machine skews the "
        f"times; the ratios of builds timed round-robin less so); the run took {elapsed / 60:.1f} min",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, "
        f"commit {commit()}",
        f"- before: {before_text}; after: `{args.after}` (the binary copied at the start; its "
        "executables link build/'s runtime libraries and headers, and all of them, every "
        "compiler's, were built right after the copy, before any timing); "
        "after --no-fuse: the same without cairn-fuse-elementwise",
        f"- plans: `cairn plan examples/X.cairn --batch N --memory-report R.json` "
        f"(`--no-fuse` for the third column), batches {', '.join(map(str, args.batches))}",
        f"- step time: `cairn build examples/X.cairn -o EXE` (each example's own batch), "
        f"`EXE train --steps W+N --seed 0 --threads 1 --data DIR --metrics M.json` minus the "
        f"same with `--steps W` (the metrics' \"seconds\", the training loop alone), over N; "
        f"W = {args.warmup}; N "
        + (f"= {args.steps}" if args.steps else
           f"per model, about {args.target_seconds:g} s of the before build's steps (at least 3)")
        + f"; {args.rounds} round{'s' if args.rounds > 1 else ''}, the three builds "
        f"round-robin, each round starting with the next; ms/step: the median over the rounds; "
        f"after/before and after/no-fuse: the median over the rounds of the round's ratio "
        f"(after_r / before_r, after_r / nofuse_r); BLAS core {', '.join(blas)}, 1 thread",
        "- weights: the first round's longer run of each build saved with `--save`; after and "
        "after --no-fuse compared with before tensor by tensor, byte for byte",
        "",
        "## Plans",
    ] + plan_lines + ["", "## Fusion"] + fusion_lines + ["", "## CPU training step"] + \
        step_lines + ["", "## Notes", ""] + (
            [f"- {n}" for n in notes] or
            ["- no arena, lower bound or kernel count grew; every build's "
             "weights are bit-identical to before's"])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwrote {out}")
    if any(r["checks"][v] for r in s.values() for v in ("after", "no-fuse")):
        log("FAIL: weights differ (see the table)")
        sys.exit(1)


if __name__ == "__main__":
    main()
