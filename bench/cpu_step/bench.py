"""Training-step time on the CPU: Cairn's executables against PyTorch 2.x, eager and
torch.compile, on the same machine, in interleaved rounds.

  bench.py run [--models M ...] [--batches B ...] [--resnet-batches B ...]
               [--threads-list T ...] [--rounds R] [--quick] [--out FILE.md] ...
      Run by bench/cpu_step/run.sh in build/bench-torch-venv (PyTorch from PyPI). For each
      model (examples/M.cairn), batch and thread count, three systems:
        Cairn: `cairn build --batch B`, then per round one `EXE train --steps 1+N --profile P
          --threads T` on a train-only data set (so no evaluation follows); the round's
          ms/step is the profile's step_seconds, the median over the N profiled steps (the
          first step, which pages the arena in, is never profiled) of the time from the
          step's first kernel to the end of its last: the whole step, forward, backward and
          optimizer update, without the copy of the batch into the arena.
        eager / compile: a worker process per system (`bench.py worker`), the PyTorch twin of
          the model (test/reference/pytorch_models.py, the model file's optimizer) plain or
          under torch.compile (default mode), torch.set_num_threads(T). It warms up once
          (torch.compile compiles there, untimed), then times each round's N steps one by
          one with time.perf_counter; the round's ms/step is their median, the same
          statistic as Cairn's. Batches come from a pool of 8 made from the same images.
      Every measured process gets this one's environment less its OPENBLAS_*, MKL_*, OMP_*,
      GOMP_*, KMP_* variables (unless --inherit-blas-env), so each library picks its kernels
      as installed, plus OMP_NUM_THREADS=T; both sides use OpenMP (libgomp) threads.
      Rounds go Cairn, eager, compile, Cairn, eager, compile, ... so a noisy machine hurts
      all alike; N is the same for the three, chosen from warm-up estimates so that the
      slowest takes about --target-seconds per round (at least --min-steps). Per system:
      the fastest round, the median round and slowest/fastest. Ratios: PyTorch ms / Cairn ms
      (above 1: Cairn is faster), from the fastest rounds and from the medians.
      GEMM and convolution rate: the FLOPs of one training step's matrix products and
      convolutions, counted from the twin's shapes by torch.utils.flop_counter (the ops
      that run: forward 2*M*N*K, backward twice that, less the gradients no one needs),
      over the summed profiled time of Cairn's kernels of those kinds (GEMM_KINDS,
      CONV_KINDS), set against the machine's sgemm peak (2048x2048 float32 at the same
      thread count, the faster of torch.mm and numpy.matmul, at the start and the end).
      Writes FILE.md (default bench/results/cpu-step-DATE.md) and FILE.json with every
      round; both are rewritten after each model, so a run cut short keeps what it did.
  bench.py worker --model M --batch B --threads T --system eager|compile --data DIR
      One PyTorch system, driven by `run` over stdin/stdout (one JSON object a line).
  bench.py sgemm --threads T
      torch.mm's and numpy.matmul's GFLOP/s on 2048x2048 float32 (one JSON object).
"""
import argparse
import datetime
import gzip
import itertools
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import ROOT, commit, cpu_name  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "tools", "Inputs"))
from write_tiny_dataset import image_shape  # noqa: E402

MODELS = ["mlp", "deep_mlp", "cnn", "transformer", "resnet18"]
SYSTEMS = ["cairn", "eager", "compile"]
NAMES = {"cairn": "Cairn", "eager": "PyTorch eager", "compile": "torch.compile"}
GEMM_KINDS = {"cairn.kernel." + k for k in
              ("linear", "linear_grad_input", "linear_grad_weight", "matmul")}
CONV_KINDS = {"cairn.kernel." + k for k in ("conv2d", "conv2d_grad_input", "conv2d_grad_weight")}
COMPILE_GOAL_MODELS = {"mlp", "cnn"}  # the goal against torch.compile
TEXT_COLUMNS = {"model", "batch", "threads", "goals"}  # left-aligned in the report's tables
STABLE = 1.20  # slowest round / fastest round at most this
FASHION = "/usr/share/datasets/fashion-mnist"
RUN_TIMEOUT = 1200  # seconds one `EXE train` round may take
POOL = 8  # batches in the data set (Cairn) and in PyTorch's pool


# ------------------------------------------------------------------------------------ data

def write_data(directory, shape, batch):
    """Writes a train-only data set of POOL batches of Fashion-MNIST images to DIRECTORY
    (NumPy files, uint8): 28x28 as they are, or padded and repeated over the channels to
    SHAPE (ResNet-18's 3x32x32, as bench/gpu feeds it). Without a test split, `EXE train`
    skips the evaluation after training."""
    import numpy as np
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    images, labels = images[:POOL * batch], labels[:POOL * batch]
    channels, height, width = shape
    if (height, width) != (28, 28):
        top, left = (height - 28) // 2, (width - 28) // 2
        padded = np.zeros((len(images), height, width), np.uint8)
        padded[:, top:top + 28, left:left + 28] = images
        images = np.repeat(padded[:, None], channels, axis=1)
    os.makedirs(directory, exist_ok=True)
    np.save(os.path.join(directory, "train_images.npy"), np.ascontiguousarray(images))
    np.save(os.path.join(directory, "train_labels.npy"), labels)


# ------------------------------------------------------------------------- PyTorch worker

def worker(args):
    """A long-lived PyTorch system: builds the twin, warms up (compiles), says `ready` with
    its warm-up estimate (and, for eager, the step's GEMM and convolution FLOPs), then for
    each request {"steps": N} on stdin times N steps and answers with their median."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_model_and_optimizer

    # Protocol on the original stdout; anything the libraries print goes to stderr.
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def say(**message):
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    try:
        torch.set_num_threads(args.threads)
        torch.manual_seed(0)
        model, in_shape, opt = make_model_and_optimizer(args.model, args.examples)
        model.train()
        images = np.load(os.path.join(args.data, "train_images.npy"))
        labels = np.load(os.path.join(args.data, "train_labels.npy"))
        pool = [(torch.from_numpy(images[i:i + args.batch].astype(np.float32) / 255)
                 .reshape(args.batch, *in_shape),
                 torch.from_numpy(labels[i:i + args.batch].astype(np.int64)))
                for i in range(0, POOL * args.batch, args.batch)]
        flops = step_flops(model, *pool[0]) if args.system == "eager" else None
        net = torch.compile(model) if args.system == "compile" else model
        counter = itertools.count()

        def step():
            x, y = pool[next(counter) % POOL]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(net(x), y).backward()
            opt.step()

        def timed(n):
            times = []
            for _ in range(n):
                start = time.perf_counter()
                step()
                times.append(time.perf_counter() - start)
            return times

        start = time.perf_counter()
        step()  # torch.compile compiles here
        first = time.perf_counter() - start
        warm = timed(args.warmup)
        while sum(warm) < args.warmup_seconds:
            warm += timed(1)
        say(ready=True, first_step_seconds=first, warmup_steps=1 + len(warm),
            estimate_ms=1000 * min(warm), flops=flops)
    except Exception as e:  # noqa: BLE001 - the error text is the result
        say(error=f"{type(e).__name__}: {e}".strip().splitlines()[0][:300])
        return
    for line in sys.stdin:
        request = json.loads(line)
        try:
            times = timed(request["steps"])
            say(ms=1000 * statistics.median(times), mean_ms=1000 * sum(times) / len(times),
                steps=len(times))
        except Exception as e:  # noqa: BLE001
            say(error=f"{type(e).__name__}: {e}".strip().splitlines()[0][:300])


def step_flops(model, x, y):
    """FLOPs of one forward and backward of MODEL on (X, Y): {"gemm", "conv"}, from
    torch.utils.flop_counter (matrix products and convolutions, counted from shapes)."""
    import torch.nn.functional as F
    from torch.utils.flop_counter import FlopCounterMode
    with FlopCounterMode(display=False) as counter:
        F.cross_entropy(model(x), y).backward()
    model.zero_grad(set_to_none=True)
    flops = {"gemm": 0, "conv": 0}
    for op, n in counter.get_flop_counts()["Global"].items():
        flops["conv" if "convolution" in str(op) else "gemm"] += n
    return flops


def sgemm(args):
    """Best GFLOP/s of a 2048x2048 float32 product over 10 timings, after one untimed, by
    torch.mm (MKL in PyPI's wheel, whose AVX-512 paths do not run on every CPU) and by
    numpy.matmul (PyPI's numpy: its own OpenBLAS, which picks its kernels by CPU)."""
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    rates = {}
    for name, product, a in (("torch.mm", torch.mm, torch.rand(2048, 2048)),
                             ("numpy.matmul", np.matmul,
                              np.random.default_rng(0).random((2048, 2048), np.float32))):
        product(a, a)
        best = 0.0
        for _ in range(10):
            start = time.perf_counter()
            product(a, a)
            best = max(best, 2 * 2048 ** 3 / (time.perf_counter() - start) / 1e9)
        rates[name] = best
    print(json.dumps(rates))


# ------------------------------------------------------------------------------ the systems

BLAS_ENV_PREFIXES = ("OPENBLAS_", "MKL_", "OMP_", "GOMP_", "KMP_")


def blas_env():
    """This process's variables that steer OpenBLAS, MKL or OpenMP (name: value)."""
    return {k: v for k, v in os.environ.items() if k.startswith(BLAS_ENV_PREFIXES)}


def child_env(args, threads):
    """The environment of every measured process, the same for Cairn and PyTorch: this one's
    without the BLAS_ENV_PREFIXES variables (unless --inherit-blas-env), so each library picks
    its kernels and its waiting as installed (an inherited OPENBLAS_CORETYPE=Haswell would
    hold Cairn's OpenBLAS to AVX2 while MKL uses AVX-512), plus OMP_NUM_THREADS=THREADS and
    torch.compile's cache in --work."""
    env = {k: v for k, v in os.environ.items()
           if args.inherit_blas_env or not k.startswith(BLAS_ENV_PREFIXES)}
    return dict(env, OMP_NUM_THREADS=str(threads),
                TORCHINDUCTOR_CACHE_DIR=os.path.join(args.work, "inductor"))


def tail(text, lines=3):
    """The last LINES non-empty lines of TEXT, joined, at most 300 characters."""
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " / ".join(kept)[-300:]


class Worker:
    """A `bench.py worker` child: start() waits for it to be ready, measure(N) runs a round."""

    def __init__(self, args, model, batch, threads, system, data):
        self.log = os.path.join(args.work, f"{model}-{batch}-{threads}-{system}.log")
        cmd = [sys.executable, os.path.abspath(__file__), "worker", "--model", model,
               "--batch", str(batch), "--threads", str(threads), "--system", system,
               "--data", data, "--examples", args.examples, "--warmup", str(args.min_steps),
               "--warmup-seconds", str(args.target_seconds)]
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=log, text=True, env=child_env(args, threads))

    def _answer(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            with open(self.log) as f:
                return {"error": f"worker exited with {self.proc.returncode}: {tail(f.read())}"}
        return json.loads(line)

    def start(self):
        """Its `ready` message (warm-up estimate, FLOPs) or {"error": ...}."""
        return self._answer()

    def measure(self, steps):
        """One round: {"ms": median step, "mean_ms", "steps"} or {"error": ...}."""
        try:
            self.proc.stdin.write(json.dumps({"steps": steps}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died: _answer reads its log
        return self._answer()

    def stop(self):
        """Ends the worker (closing its stdin ends its loop; kills it if it lingers)."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class Cairn:
    """Cairn's executable for one model and batch; measure(N) is one `EXE train` run."""

    def __init__(self, args, model, batch, data):
        self.args, self.data = args, data
        self.work = os.path.join(args.work, f"{model}-{batch}")
        self.exe = os.path.join(self.work, model)
        os.makedirs(self.work, exist_ok=True)
        build = subprocess.run([args.cairn, "build", os.path.join(args.examples, model + ".cairn"),
                                "--batch", str(batch), "-o", self.exe],
                               capture_output=True, text=True)
        self.error = None
        if build.returncode:
            self.error = (f"cairn build failed ({build.returncode}): "
                          f"{tail(build.stdout + build.stderr)}")

    def measure(self, steps, threads):
        """One round: {"ms": the profile's step_seconds, "kinds": profiled seconds per kernel
        kind, "run_seconds": the metrics' seconds, "blas_core"} or {"error": ...}."""
        profile = os.path.join(self.work, f"profile-{threads}.json")
        metrics = os.path.join(self.work, f"metrics-{threads}.json")
        try:
            run = subprocess.run([self.exe, "train", "--data", self.data, "--steps",
                                  str(1 + steps), "--threads", str(threads), "--profile", profile,
                                  "--metrics", metrics, "--log-every", "1000000000"],
                                 capture_output=True, text=True, timeout=RUN_TIMEOUT,
                                 env=child_env(self.args, threads))
        except subprocess.TimeoutExpired:
            return {"error": f"EXE train took over {RUN_TIMEOUT} s"}
        if run.returncode:
            return {"error": f"EXE train exited with {run.returncode}: "
                             f"{tail(run.stdout + run.stderr)}"}
        with open(profile) as f:
            kernels = json.load(f)
        with open(metrics) as f:
            seconds = json.load(f)
        kinds = {}
        for k in kernels["kernels"]:
            kinds[k["kind"]] = kinds.get(k["kind"], 0.0) + k["seconds"]
        return {"ms": 1000 * kernels["step_seconds"], "steps": kernels["steps"], "kinds": kinds,
                "run_seconds": seconds["seconds"], "blas_core": seconds.get("blas_core"),
                "device": seconds.get("device")}


# ---------------------------------------------------------------------------------- the run

def summarize(rounds):
    """{"fastest", "median", "spread" (slowest/fastest)} of a system's rounds' ms/step, or
    {"error"} when a round failed."""
    errors = [r["error"] for r in rounds if "error" in r]
    if errors or not rounds:
        return {"error": errors[0] if errors else "no rounds"}
    ms = [r["ms"] for r in rounds]
    return {"fastest": min(ms), "median": statistics.median(ms), "spread": max(ms) / min(ms)}


def start_systems(args, cairn, entry, workers, threads, data):
    """Starts the PyTorch workers of ENTRY (into WORKERS) and runs Cairn once; their
    ms/step estimates ({system: ms}), without the systems that failed."""
    estimates = {}
    for system in ("eager", "compile"):
        started = time.perf_counter()
        workers[system] = Worker(args, entry["model"], entry["batch"], threads, system, data)
        ready = workers[system].start()
        ready["startup_seconds"] = time.perf_counter() - started
        entry["systems"][system] = {"ready": ready, "rounds": []}
        if "error" in ready:
            progress(f"  {NAMES[system]}: failed: {ready['error']}")
            workers.pop(system).stop()
            continue
        progress(f"  {NAMES[system]}: ready in {ready['startup_seconds']:.0f} s (first step "
                 f"{ready['first_step_seconds']:.1f} s), ~{ready['estimate_ms']:.2f} ms/step")
        estimates[system] = ready["estimate_ms"]
        if ready.get("flops"):
            entry["flops"] = ready["flops"]
    probe = {"error": cairn.error} if cairn.error else cairn.measure(args.min_steps, threads)
    entry["systems"]["cairn"] = {"ready": probe, "rounds": []}
    if "error" in probe:
        progress(f"  Cairn: failed: {probe['error']}")
    else:
        progress(f"  Cairn: ~{probe['ms']:.2f} ms/step")
        estimates["cairn"] = probe["ms"]
    return estimates


def run_rounds(args, cairn, entry, workers, threads, estimates):
    """--rounds rounds of the systems in ESTIMATES, interleaved, each the same number of
    steps: enough for about --target-seconds of the slowest estimate, at least --min-steps.
    A system that fails a round runs no more."""
    steps = max(args.min_steps, math.ceil(1000 * args.target_seconds / max(estimates.values())))
    entry["steps_per_round"] = steps
    for r in range(args.rounds):
        line = []
        for system in [s for s in SYSTEMS if s in estimates]:
            result = (cairn.measure(steps, threads) if system == "cairn"
                      else workers[system].measure(steps))
            entry["systems"][system]["rounds"].append(result)
            if "error" in result:
                del estimates[system]
            line.append(f"{NAMES[system]} " + (f"{result['ms']:.2f}" if "ms" in result
                                               else f"failed: {result['error']}"))
        progress(f"  round {r + 1}/{args.rounds}, {steps} steps: " + ", ".join(line) + " ms")


def measure_config(args, cairn, model, batch, threads, data):
    """One model, batch and thread count: the three systems' rounds and summaries, the
    entry for the JSON and the report. The workers end with it, however it ends."""
    entry = {"model": model, "batch": batch, "threads": threads, "systems": {}}
    workers = {}
    try:
        estimates = start_systems(args, cairn, entry, workers, threads, data)
        if estimates:
            run_rounds(args, cairn, entry, workers, threads, estimates)
    finally:
        for w in workers.values():
            w.stop()
    for s in entry["systems"].values():
        s["summary"] = (summarize(s["rounds"]) if s["rounds"]
                        else {"error": s["ready"].get("error", "not run")})
    return entry


def threads_text(threads):
    return f"{threads} thread" + ("" if threads == 1 else "s")


def progress(text):
    """A progress line on stderr, with the time of day."""
    print(f"bench/cpu_step {time.strftime('%H:%M:%S')}: {text}", file=sys.stderr, flush=True)


def measure_peaks(args, results):
    """Measures the sgemm rates at each thread count (`bench.py sgemm`); keeps the best so far
    of each library in results["sgemm"] and of both in results["peak_gflops"] (run at the
    start and at the end)."""
    for threads in args.threads_list:
        env = dict(child_env(args, threads), OPENBLAS_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "sgemm", "--threads",
                              str(threads)], capture_output=True, text=True, env=env)
        if out.returncode:
            progress(f"sgemm at {threads_text(threads)} failed: {tail(out.stderr)}")
            continue
        rates = json.loads(out.stdout.strip().splitlines()[-1])
        best = results["sgemm"].setdefault(str(threads), {})
        for name, gflops in rates.items():
            best[name] = max(gflops, best.get(name, 0.0))
        results["peak_gflops"][str(threads)] = max(best.values())
        progress(f"sgemm at {threads_text(threads)}: " +
                 ", ".join(f"{n} {g:.1f} GFLOP/s" for n, g in rates.items()))


def run(args):
    """The whole benchmark: the sgemm peaks, then each model, batch and thread count;
    rewrites the report after each model."""
    import torch
    started = datetime.datetime.now(datetime.timezone.utc)
    out = args.out or os.path.join(ROOT, "bench", "results", f"cpu-step-{started:%Y-%m-%d}.md")
    os.makedirs(args.work, exist_ok=True)
    results = {"command": args.command, "date": f"{started:%Y-%m-%d %H:%M} UTC",
               "commit": commit(), "cpu": cpu_name(), "cores": os.cpu_count(),
               "torch": torch.__version__, "threads": args.threads_list, "rounds": args.rounds,
               "target_seconds": args.target_seconds, "min_steps": args.min_steps,
               "blas_env": blas_env(), "inherit_blas_env": args.inherit_blas_env,
               "load_before": os.getloadavg()[0], "sgemm": {}, "peak_gflops": {}, "entries": []}
    measure_peaks(args, results)
    for model in args.models:
        for batch in (args.resnet_batches if model == "resnet18" else args.batches):
            data = os.path.join(args.work, f"data-{model}-{batch}")
            shape = image_shape(os.path.join(args.examples, model + ".cairn")) or (1, 28, 28)
            write_data(data, shape, batch)
            progress(f"{model} batch {batch}: cairn build")
            cairn = Cairn(args, model, batch, data)
            for threads in args.threads_list:
                progress(f"{model} batch {batch}, {threads_text(threads)}")
                results["entries"].append(measure_config(args, cairn, model, batch, threads, data))
            write_results(out, results, started)
    measure_peaks(args, results)
    write_results(out, results, started)
    progress(f"wrote {out} and its .json in {results['seconds'] / 60:.1f} min")


# ---------------------------------------------------------------------------------- report

def fmt(x, spec=".2f"):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def system_cells(summary):
    """fastest | median | slowest/fastest of one system (the last flagged when unstable)."""
    if "error" in summary:
        return [f"failed: {summary['error']}".replace("|", "/"), "", ""]
    flag = " (unstable)" if summary["spread"] > STABLE else ""
    return [fmt(summary["fastest"]), fmt(summary["median"]), fmt(summary["spread"]) + flag]


def ratio(entry, system, key):
    """SYSTEM's ms over Cairn's from the KEY ("fastest"/"median") rounds, or None."""
    s, c = entry["systems"][system]["summary"], entry["systems"]["cairn"]["summary"]
    return s[key] / c[key] if key in s and key in c else None


def goals(entry):
    """[(goal, met: bool or None when it cannot be told)] of one row."""
    out = [("eager", ratio(entry, "eager", "fastest"))]
    if entry["model"] in COMPILE_GOAL_MODELS:
        out.append(("compile", ratio(entry, "compile", "fastest")))
    met = [(g, None if r is None else r >= 1.0) for g, r in out]
    spread = entry["systems"]["cairn"]["summary"].get("spread")
    return met + [("stable", None if spread is None else spread <= STABLE)]


def rates(entry, peak):
    """Cairn's GEMM and convolution cells: GFLOP/step, ms (the kernels' profiled time in
    Cairn's fastest round), GFLOP/s, share of the sgemm PEAK."""
    rounds = [r for r in entry["systems"]["cairn"]["rounds"] if "kinds" in r]
    flops = entry.get("flops")
    cells = []
    for name, kinds in (("gemm", GEMM_KINDS), ("conv", CONV_KINDS)):
        if not rounds or not flops or not flops[name]:
            cells += ["-"] * 4
            continue
        fastest = min(rounds, key=lambda r: r["ms"])
        seconds = sum(s for k, s in fastest["kinds"].items() if k in kinds)
        rate = flops[name] / seconds / 1e9 if seconds else float("nan")
        cells += [f"{flops[name] / 1e9:.3f}", f"{1000 * seconds:.2f}", f"{rate:.1f}",
                  f"{100 * rate / peak:.0f}%"]
    return cells


def summary_line(entries):
    """How many of the rows' goals are met, and which are not."""
    verdicts = [(e, g, ok) for e in entries for g, ok in goals(e)]
    missed = [f"{e['model']} {e['batch']} at {threads_text(e['threads'])}: {g}"
              for e, g, ok in verdicts if ok is False]
    unknown = sum(ok is None for _, _, ok in verdicts)
    return (f"- goals met: {sum(ok is True for _, _, ok in verdicts)} of {len(verdicts)}"
            + (f"; not met: {'; '.join(missed)}" if missed else "")
            + (f"; {unknown} not measurable (a system failed)" if unknown else ""))


def table(header, rows):
    """A markdown table; numbers right-aligned, the columns in TEXT_COLUMNS left."""
    align = " ".join("---" if h in TEXT_COLUMNS else "---:" for h in header)
    return (["| " + " | ".join(header) + " |", "| " + align.replace(" ", " | ") + " |"]
            + ["| " + " | ".join(row) + " |" for row in rows])


def round_rows(entry):
    """Round by round, each system's ms/step and its ratio to that system's fastest round:
    whether the slow rounds of one side are the other's too (the machine) or its own."""
    rounds = {s: entry["systems"][s]["rounds"] for s in SYSTEMS}
    fastest = {s: min(r["ms"] for r in rounds[s]) for s in SYSTEMS if rounds[s]}
    rows = []
    for i in range(max(len(r) for r in rounds.values())):
        row = [entry["model"], str(entry["batch"]), str(i + 1)]
        for s in SYSTEMS:
            r = rounds[s][i] if i < len(rounds[s]) else None
            row.append(f"{r['ms']:.2f} ({r['ms'] / fastest[s]:.2f})" if r else "-")
        rows.append(row)
    return rows


def write_results(out, results, started=None):
    """Writes OUT (markdown) and its .json from RESULTS, with the load average now and the
    time since STARTED (None: RESULTS as they were, for `report`)."""
    if started is not None:
        results["load_after"] = os.getloadavg()[0]
        results["seconds"] = (datetime.datetime.now(datetime.timezone.utc)
                              - started).total_seconds()
    entries = results["entries"]
    torch_version = results["torch"]
    blas = sorted({r["blas_core"] for e in entries for r in e["systems"]["cairn"]["rounds"]
                   if r.get("blas_core")})
    # The executables' own words ("CPU, GEMM oneDNN, OpenBLAS core SkylakeX, 2 threads"),
    # where their metrics say it (since 9824ea7).
    devices = sorted({r["device"] for e in entries for r in e["systems"]["cairn"]["rounds"]
                      if r.get("device")})
    cairn_text = ("Cairn's executables: " + "; ".join(devices) if devices else
                  f"Cairn's BLAS: OpenBLAS (OpenMP), core {', '.join(blas) or '?'}")
    env = ", ".join(f"{k}={v}" for k, v in sorted(results["blas_env"].items())) or "none"
    env = (f"inherited by both: {env}" if results["inherit_blas_env"] else
           f"both run without this shell's OpenBLAS/MKL/OpenMP variables ({env}), so each "
           "library picks its own kernels")
    lines = [
        f"# CPU training step: Cairn against PyTorch {torch_version} eager and torch.compile",
        "",
        f"- command: `{results['command']}`",
        f"- machine: {results['cpu']}, {results['cores']} cores; load average before the run "
        f"{results['load_before']:.2f}, after {results['load_after']:.2f} (other work on "
        "the machine skews every number)",
        f"- date: {results['date']}, {results['seconds'] / 60:.0f} min; commit "
        f"{results['commit']}",
        f"- PyTorch {torch_version} from PyPI (build/bench-torch-venv); {cairn_text}; threads "
        f"{', '.join(map(str, results['threads']))}"
        f" (Cairn `--threads T`, PyTorch `torch.set_num_threads(T)`, both OMP_NUM_THREADS=T); "
        f"{env}",
        "- sgemm peak: 2048x2048 float32, best of 10 at the start and 10 at the end, the faster "
        "of torch.mm (MKL) and numpy.matmul (numpy's OpenBLAS): " + "; ".join(
            f"{threads_text(int(t))}: " + ", ".join(f"{n} {g:.1f}" for n, g in rates.items())
            + " GFLOP/s"
            for t, rates in results["sgemm"].items()),
        f"- {results['rounds']} interleaved rounds (Cairn, eager, compile, Cairn, ...); per round "
        f"the same N steps for the three, about {results['target_seconds']:g} s for the slowest, "
        f"at least {results['min_steps']}",
        "",
        "## Summary",
        "",
        summary_line(entries),
        "",
        "## How measured",
        "",
        "- Cairn: one `EXE train --steps 1+N --profile P` run per round (a train-only copy of "
        "the images, so no evaluation); ms/step is the profile's `step_seconds`: the median "
        "over the N profiled steps (the first step is never profiled) of the time from the "
        "step's first kernel to the end of its last, i.e. the whole step (forward, backward, "
        "optimizer update) without the copy of the batch into the arena.",
        "- PyTorch: the twin in test/reference/pytorch_models.py with the model file's "
        "optimizer, eager or `torch.compile(model)` (default mode), one long-lived process "
        "each, warmed up once (the compile untimed); per round N steps (zero_grad, forward, "
        "cross-entropy, backward, optimizer step) each timed with `time.perf_counter`, "
        "ms/step their median. Batches from a pool of 8 of the same images, already float32.",
        "- fastest / median: of the rounds' ms/step; spread: slowest round / fastest, "
        f"\"unstable\" above {STABLE:.2f}. Ratios: PyTorch ms / Cairn ms (above 1: Cairn is "
        "faster), from the fastest rounds and from the medians.",
        "- Goals (the issue): eager / Cairn >= 1.0 on every example and thread count; "
        "compile / Cairn >= 1.0 on mlp and cnn; Cairn's spread <= 1.20. Judged on the "
        "fastest rounds.",
        "- GEMM and convolution rate: FLOPs of one step's matrix products and convolutions, "
        "counted from the twin's shapes by torch.utils.flop_counter (forward 2*M*N*K, "
        "backward the gradients that are needed, twice that for hidden layers), over the "
        "summed profiled time of Cairn's kernels of those kinds (GEMM: "
        + ", ".join(sorted(k.split(".")[-1] for k in GEMM_KINDS)) + "; convolution: "
        + ", ".join(sorted(k.split(".")[-1] for k in CONV_KINDS))
        + ") in its fastest round, and as a share of the sgemm peak at the same thread count.",
    ]
    for threads in results["threads"]:
        rows = [e for e in entries if e["threads"] == threads]
        if not rows:
            continue
        peak = results["peak_gflops"].get(str(threads), float("nan"))
        lines += ["", f"## {threads_text(threads)}", "",
                  "Step time, ms (fastest round, median round, slowest/fastest):", ""]
        lines += table(["model", "batch", "steps/round"]
                       + [f"{NAMES[s]} {c}" for s in SYSTEMS
                          for c in ("fastest", "median", "spread")],
                       [[e["model"], str(e["batch"]), str(e.get("steps_per_round", "-"))]
                        + [c for s in SYSTEMS for c in system_cells(e["systems"][s]["summary"])]
                        for e in rows])
        lines += ["", "Ratios (PyTorch ms / Cairn ms) and goals:", ""]
        ratio_rows = []
        for e in rows:
            marks = ", ".join(f"{g} {'met' if ok else 'NOT met'}" for g, ok in goals(e)
                              if ok is not None)
            ratio_rows.append([e["model"], str(e["batch"]), str(threads)]
                              + [fmt(ratio(e, s, k)) for s in ("eager", "compile")
                                 for k in ("fastest", "median")] + [marks or "-"])
        lines += table(["model", "batch", "threads", "eager / Cairn (fastest)",
                        "eager / Cairn (median)", "compile / Cairn (fastest)",
                        "compile / Cairn (median)", "goals"], ratio_rows)
        lines += ["", f"Cairn's GEMM and convolution rate (peak {peak:.1f} GFLOP/s):", ""]
        lines += table(["model", "batch", "threads", "GEMM GFLOP/step", "GEMM ms", "GEMM GFLOP/s",
                        "GEMM of peak", "conv GFLOP/step", "conv ms", "conv GFLOP/s",
                        "conv of peak"],
                       [[e["model"], str(e["batch"]), str(threads)] + rates(e, peak) for e in rows])
        unstable = [e for e in rows
                    if any(e["systems"][s]["summary"]["spread"] > STABLE for s in SYSTEMS)]
        if unstable:
            lines += ["", "Round by round where a system is unstable: ms/step (that system's "
                      "fastest round = 1). Slow rounds shared by every system point at the "
                      "machine (another tenant, the memory bandwidth), slow rounds of one "
                      "system alone at that system:", ""]
            lines += table(["model", "batch", "round"] + [NAMES[s] for s in SYSTEMS],
                           [row for e in unstable for row in round_rows(e)])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)


# ------------------------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run", help="the whole benchmark; writes the results files")
    r.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    r.add_argument("--work", default="/tmp/cairn-bench-cpu-step",
                   help="executables, data, profiles, worker logs, torch.compile's cache")
    r.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    r.add_argument("--batches", nargs="+", type=int, default=[64, 256],
                   help="batches of every model but resnet18")
    r.add_argument("--resnet-batches", nargs="+", type=int, default=[32, 128])
    r.add_argument("--threads-list", nargs="+", type=int, default=[os.cpu_count() or 1, 1])
    r.add_argument("--rounds", type=int, help="interleaved rounds (default 10, --quick 3)")
    r.add_argument("--target-seconds", type=float,
                   help="about this long per round for the slowest system (default 1, --quick 0.3)")
    r.add_argument("--min-steps", type=int, default=3, help="steps per round at least")
    r.add_argument("--quick", action="store_true", help="a short check: fewer, shorter rounds")
    r.add_argument("--inherit-blas-env", action="store_true",
                   help="keep this shell's OPENBLAS_*, MKL_*, OMP_*, GOMP_*, KMP_* variables for "
                   "both sides (default: drop them)")
    r.add_argument("--out", help="results file (default bench/results/cpu-step-DATE.md)")
    r.add_argument("--command", default="bench/cpu_step/run.sh", help="for the results file")
    w = sub.add_parser("worker", help="one PyTorch system, driven by `run`")
    w.add_argument("--model", required=True)
    w.add_argument("--batch", type=int, required=True)
    w.add_argument("--system", choices=["eager", "compile"], required=True)
    w.add_argument("--data", required=True)
    w.add_argument("--warmup", type=int, default=3, help="warm-up steps at least")
    w.add_argument("--warmup-seconds", type=float, default=1.0, help="warm-up time at least")
    s = sub.add_parser("sgemm", help="torch.mm's and numpy.matmul's GFLOP/s (JSON)")
    p = sub.add_parser("report", help="write FILE.md again from FILE.json")
    p.add_argument("json")
    for p in (r, w):
        p.add_argument("--examples", default=os.path.join(ROOT, "examples"))
    for p in (w, s):
        p.add_argument("--threads", type=int, required=True)
    args = ap.parse_args()
    if args.mode == "run":
        args.rounds = args.rounds or (3 if args.quick else 10)
        args.target_seconds = args.target_seconds or (0.3 if args.quick else 1.0)
        args.cairn = os.path.abspath(args.cairn)
        # Ctrl-C (even where a shell started us ignoring it) or a kill: the finally blocks
        # stop the workers, which also end when their stdin closes.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        run(args)
    elif args.mode == "report":
        with open(args.json) as f:
            write_results(os.path.splitext(args.json)[0] + ".md", json.load(f))
    elif args.mode == "worker":
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends a worker at once
        worker(args)
    else:
        sgemm(args)


if __name__ == "__main__":
    main()
