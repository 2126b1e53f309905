"""Data-parallel training: Cairn's replicas (`cairn build --replicas R`) against PyTorch 2.x
DistributedDataParallel (gloo), same models, global batch, optimizer and threads, in one run.

  bench.py run [--models M ...] [--batch B] [--ranks 1 2] [--rounds R] [--steps N | M=N ...]
               [--warmup W] [--bucket-mb MB] [--python VENV_PYTHON] [--cairn CAIRN]
               [--out FILE.md] [--keep]
      Run by bench/data_parallel/run.sh with /usr/bin/python3 (the standard library only);
      PyTorch runs in worker processes of VENV_PYTHON (build/bench-torch-venv). For each model
      (examples/M.cairn) at global batch B, and each rank count R of --ranks (1 and 2):
        Cairn: `cairn build M --batch B -o EXE` for R = 1, run as one process (`EXE train`);
          `cairn build M --batch B --replicas R -o EXE` otherwise, run as `mpirun
          --oversubscribe --bind-to none -np R EXE train` (each rank takes B/R examples of
          every batch; the gradients are summed in buckets (MPI all-to-all, then
          all-gather), default 25 MiB, while the backward runs; rank 0's batch-norm buffers
          are broadcast before each step and the step's loss is gathered on rank 0, so the ranks are in lock step). Every run
          is `EXE train --data D --steps W+N --threads 1 --metrics F --log-every gcd(W, N)`:
          rank 0's progress lines give the time since the training loop began at each logged
          step (step k * B / the line's cumulative ex/s), and the round's ms/step is (time at
          step W+N - time at step W) / N: the N steady-state steps, the W warm-up steps (the
          first pages the arena in) excluded. It includes Cairn's own data feeding (the copy
          of each batch's uint8 pixels, scaled to float, from its in-memory data set into the
          arena), its gradient sums and its loss gather.
        PyTorch: R worker processes (`bench.py worker`), each torch.set_num_threads(1) and
          torch.set_num_interop_threads(1): the model's PyTorch twin
          (test/reference/pytorch_models.py) and the model file's optimizer
          (check_step_agreement.make_model_and_optimizer, torch.manual_seed(0)). R = 1 is the
          plain model in one process (no process group, no DDP), as Cairn's R = 1 is the
          executable without replicas; otherwise torch.distributed's gloo backend (a FileStore
          rendezvous, GLOO_SOCKET_IFNAME=lo) and DistributedDataParallel(bucket_cap_mb=25,
          its defaults otherwise: broadcast_buffers=True, as Cairn's buffer broadcast). Rank
          r takes examples [r*B/R, (r+1)*B/R) of every global batch (DistributedSampler's
          share of the same batch), from a pool of batches made into float tensors before
          any step. The model and its loss run inside DDP's forward (a wrapper module). W
          warm-up steps, a barrier, N timed steps (zero_grad(set_to_none=True), forward and
          loss, backward, optimizer step, loss.item()), a barrier: rank 0's time / N.
      Data: the first POOL*B Fashion-MNIST training images (padded and repeated to the model's
      image shape where it is not 1x28x28), a train split only (so `EXE train` runs no
      evaluation), written as NumPy files read by both sides.
      Each measured process gets this one's environment less its OPENBLAS_*, MKL_*, OMP_*,
      GOMP_*, KMP_* variables, plus OMP_NUM_THREADS=1, OMP_WAIT_POLICY=passive, Open MPI's
      settings for root in a container (MPI_ENVIRONMENT, with mpi_yield_when_idle) and
      GLOO_SOCKET_IFNAME=lo: the same for Cairn and PyTorch.
      Rounds: --rounds times Cairn on each R, then PyTorch on each R (Cairn 1, Cairn 2, PyTorch
      1, PyTorch 2, Cairn 1, ...), so that the machine's noise falls on all of them. Per
      system and R: the median round (ms/step), examples/s = B / that, scaling efficiency =
      throughput on R / (R x throughput on 1) = ms(1) / (R x ms(R)), and the Cairn/PyTorch
      ratio of the medians (below 1: Cairn is faster) and the median of the rounds' ratios.
      Memory: Cairn's planned arena per rank (the metrics' planned_arena_bytes) and rank 0's
      peak RSS; PyTorch rank 0's peak RSS (getrusage) and its growth over the RSS before the
      first step (the step's tensors, gradients, optimizer state and allocator caches; the
      RSS includes libtorch itself). A run that fails is not run again; the error is kept.
      Writes FILE.md and FILE.json (default bench/results/data_parallel-<date>-<commit>.*)
      with the command, the date, the commit, the machine, torch's and Open MPI's versions
      and the load average around each model; both are rewritten after each model.
  bench.py worker --model M --batch B --rank R --world N --store FILE --data DIR ...
      One PyTorch process of a run (VENV_PYTHON), its result as JSON in --out.
  bench.py report FILE.json
      Writes FILE.md again from FILE.json.
"""
import argparse
import datetime
import gzip
import json
import math
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import ROOT, commit, cpu_name  # noqa: E402
from rank_processes import run_ranks, tail  # noqa: E402

MiB = 1 << 20
FASHION = "/usr/share/datasets/fashion-mnist"
# Timed steps per run by model (--steps), so that a run's N steps take about a second or more
# at one thread on this machine (mlp's step takes well under a millisecond).
STEPS = {"mlp": 1000, "deep_mlp": 200, "cnn": 100, "transformer": 60, "autoencoder": 200,
         "resnet18": 5}
DEFAULT_STEPS = 60
POOL = 100  # global batches in the data set (fewer when fewer steps run)
SYSTEMS = ["cairn", "torch"]
NAMES = {"cairn": "Cairn", "torch": "PyTorch"}
# Open MPI as root and without the single-copy mechanism that containers' ptrace rules forbid;
# a rank waiting for a message yields its core (the machine has as many cores as ranks).
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_mpi_yield_when_idle": "1",
}
BLAS_ENV_PREFIXES = ("OPENBLAS_", "MKL_", "OMP_", "GOMP_", "KMP_")
RUN_TIMEOUT = 600  # seconds one run (all its processes) may take
# The cairn binary may be rebuilt while this runs: a command that cannot start (or that dies
# of a signal) is tried again this many times, RETRY_SECONDS apart.
RETRIES = 5
RETRY_SECONDS = 10


def progress(text):
    print(f"bench/data_parallel {time.strftime('%H:%M:%S')}: {text}", file=sys.stderr,
          flush=True)


def child_env():
    """The environment of every measured process, Cairn's and PyTorch's alike."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(BLAS_ENV_PREFIXES)}
    return dict(env, **MPI_ENVIRONMENT, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive",
                GLOO_SOCKET_IFNAME="lo")


def run(cmd, **kw):
    """Runs cmd; its CompletedProcess when it exits 0, else the failure's words (a string).
    Retries a command that could not start or died of a signal (a binary being relinked)."""
    failure = ""
    for attempt in range(RETRIES + 1):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT, **kw)
        except subprocess.TimeoutExpired:
            return f"timed out after {RUN_TIMEOUT} s"
        except OSError as error:  # ETXTBSY, ENOENT while the binary is replaced
            failure = str(error)
        else:
            if out.returncode == 0:
                return out
            failure = f"exit {out.returncode}: {tail(out.stdout + out.stderr)}"
            if out.returncode > 0 and out.returncode not in (126, 127):
                return failure
        if attempt < RETRIES:
            progress(f"{os.path.basename(cmd[0])} failed ({failure[:200]}), retrying")
            time.sleep(RETRY_SECONDS)
    return failure


# ------------------------------------------------------------------------------------ data

def image_shape(model_file):
    """(C, H, W) of the model's `input image: T[B, C, H, W]`; (1, 28, 28) otherwise."""
    with open(model_file) as f:
        image = re.search(r"input\s+image\s*:\s*\w+\[\s*\w+\s*,([^\]]*)\]", f.read())
    dims = [int(d) for d in image.group(1).split(",")] if image else []
    return tuple(dims) if len(dims) == 3 else (1, 28, 28)


def write_npy(path, shape, data):
    """A uint8 NumPy file, with the standard library."""
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(data)


def write_data(directory, shape, count):
    """DIRECTORY/train_images.npy and train_labels.npy: the first COUNT Fashion-MNIST training
    images (uint8, [N, 28, 28], or zero-padded and repeated over the channels to [N, C, H, W])
    and their labels. Without a test split, `EXE train` runs no evaluation."""
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        images = f.read()[16:]
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        labels = f.read()[8:]
    count = min(count, len(labels))
    channels, height, width = shape
    if (channels, height, width) == (1, 28, 28):
        pixels, dims = images[:count * 784], (count, 28, 28)
    else:
        top, left = (height - 28) // 2, (width - 28) // 2
        out = bytearray()
        for i in range(count):
            plane = bytearray(height * width)
            for row in range(28):
                start = (top + row) * width + left
                plane[start:start + 28] = images[(i * 28 + row) * 28:(i * 28 + row + 1) * 28]
            out += plane * channels
        pixels, dims = bytes(out), (count, channels, height, width)
    os.makedirs(directory, exist_ok=True)
    write_npy(os.path.join(directory, "train_images.npy"), dims, pixels)
    write_npy(os.path.join(directory, "train_labels.npy"), (count,), labels[:count])
    return count


# ------------------------------------------------------------------------- PyTorch worker

def worker(args):
    """One rank of a PyTorch run: W warm-up steps, N timed ones; its result in --out."""
    import resource

    import numpy as np
    import torch
    import torch.nn.functional as F
    from torch import nn
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_model_and_optimizer

    def rss():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS"))

    result = {"rank": args.rank}
    try:
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
        torch.manual_seed(0)
        model, in_shape, opt = make_model_and_optimizer(args.model, os.path.join(ROOT,
                                                                                  "examples"))
        model.train()

        class WithLoss(nn.Module):
            """The model and the model file's loss in one forward, so that DDP sees both."""

            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, image, label):
                if hasattr(self.inner, "loss"):
                    return self.inner.loss(image, label)
                return F.cross_entropy(self.inner(image), label)

        net = WithLoss(model)
        distributed = args.world > 1
        if distributed:
            import torch.distributed as dist
            dist.init_process_group("gloo", init_method="file://" + args.store, rank=args.rank,
                                    world_size=args.world,
                                    timeout=datetime.timedelta(seconds=RUN_TIMEOUT))
            net = nn.parallel.DistributedDataParallel(net, bucket_cap_mb=args.bucket_mb)
        share = args.batch // args.world
        images = np.load(os.path.join(args.data, "train_images.npy"))
        labels = np.load(os.path.join(args.data, "train_labels.npy"))
        pool = []
        for first in range(0, len(labels) - args.batch + 1, args.batch):
            mine = slice(first + args.rank * share, first + (args.rank + 1) * share)
            pool.append((torch.from_numpy(images[mine].astype(np.float32) / 255)
                         .reshape(share, *in_shape),
                         torch.from_numpy(labels[mine].astype(np.int64))))
        losses = []

        def step(k):
            x, y = pool[k % len(pool)]
            opt.zero_grad(set_to_none=True)
            loss = net(x, y)
            loss.backward()
            opt.step()
            losses.append(loss.item())

        result["rss_before_bytes"] = rss()
        for k in range(args.warmup):
            step(k)
        if distributed:
            dist.barrier()
        start = time.perf_counter()
        for k in range(args.warmup, args.warmup + args.steps):
            step(k)
        if distributed:
            dist.barrier()
        seconds = time.perf_counter() - start
        result.update(ms=1000 * seconds / args.steps, seconds=seconds, steps=args.steps,
                      final_loss=losses[-1],
                      peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      torch=torch.__version__)
        if distributed:
            dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001 - the error text is the result
        result["error"] = f"{type(e).__name__}: {e}".strip().splitlines()[0][:400]
    with open(args.out, "w") as f:
        json.dump(result, f)
    if "error" in result:
        sys.exit(1)


# ------------------------------------------------------------------------------ the systems

def build_cairn(args, model_file, ranks, exe):
    """Builds EXE for RANKS replicas (none for 1): {"build_seconds"} or {"error"}."""
    cmd = [args.cairn, "build", model_file, "--batch", str(args.batch), "-o", exe]
    if ranks > 1:
        cmd += ["--replicas", str(ranks)]
        if args.bucket_mb != 25:
            cmd += ["--bucket", f"{args.bucket_mb}MiB"]
    started = time.perf_counter()
    out = run(cmd)
    if isinstance(out, str):
        return {"error": f"cairn build failed ({out})"}
    return {"build_seconds": time.perf_counter() - started}


PROGRESS_LINE = re.compile(r"\bstep (\d+)/\d+\b.*?\s(\d+(?:\.\d+)?) ex/s")


def run_cairn(args, exe, ranks, data, warmup, steps, metrics):
    """One `EXE train` run (under mpirun for RANKS > 1): {"ms": steady-state ms/step, ...} or
    {"error"}."""
    every = math.gcd(warmup, steps)
    cmd = [exe, "train", "--data", data, "--steps", str(warmup + steps), "--threads", "1",
           "--metrics", metrics, "--log-every", str(every)]
    if ranks > 1:
        cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)] + cmd
    if os.path.exists(metrics):
        os.remove(metrics)
    out = run(cmd, env=child_env())
    if isinstance(out, str):
        return {"error": f"{os.path.basename(exe)} train on {rank_words(ranks)} failed: {out}"}
    # Seconds since the loop began at each logged step: step * batch / cumulative ex/s.
    elapsed = {}
    for match in PROGRESS_LINE.finditer(out.stderr + out.stdout):
        k, rate = int(match.group(1)), float(match.group(2))
        if rate > 0:
            elapsed[k] = k * args.batch / rate
    if warmup not in elapsed or warmup + steps not in elapsed:
        return {"error": f"no progress lines at steps {warmup} and {warmup + steps} in "
                         f"`{tail(out.stderr + out.stdout)}`"}
    with open(metrics) as f:
        report = json.load(f)
    if report.get("steps") != warmup + steps:
        return {"error": f"ran {report.get('steps')} steps, not {warmup + steps}"}
    seconds = elapsed[warmup + steps] - elapsed[warmup]
    result = {"ms": 1000 * seconds / steps,
              "ms_with_warmup": 1000 * report["seconds"] / (warmup + steps),
              "loop_seconds": report["seconds"], "final_loss": report.get("final_loss"),
              "replicas": report.get("replicas"),
              "planned_arena_bytes": report.get("planned_arena_bytes"),
              "peak_rss_bytes": report.get("peak_rss_bytes")}
    waits = report.get("devices_wait_seconds")
    if ranks > 1 and waits:
        result["wait_share"] = [w / report["seconds"] for w in waits]
    return result


def run_torch(args, model, ranks, data, warmup, steps, tag):
    """One PyTorch run of RANKS worker processes: rank 0's {"ms", ...} (with every rank's
    peak RSS) or {"error"}."""
    store = os.path.join(args.work, f"store-{tag}")
    if os.path.exists(store):
        os.remove(store)
    commands, outs, logs = [], [], []
    for rank in range(ranks):
        outs.append(os.path.join(args.work, f"torch-{tag}-{rank}.json"))
        logs.append(os.path.join(args.work, f"torch-{tag}-{rank}.log"))
        commands.append(
            [args.python, os.path.abspath(__file__), "worker", "--model", model,
             "--batch", str(args.batch), "--rank", str(rank), "--world", str(ranks),
             "--store", store, "--data", data, "--warmup", str(warmup), "--steps",
             str(steps), "--bucket-mb", str(args.bucket_mb), "--out", outs[-1]])
    results, error = run_ranks(commands, outs, logs, child_env(), RUN_TIMEOUT)
    if error:
        return {"error": error}
    first = results[0]
    return {"ms": first["ms"], "final_loss": first["final_loss"], "torch": first["torch"],
            "peak_rss_bytes": first["peak_rss_bytes"],
            "rss_before_bytes": first["rss_before_bytes"],
            "ranks_ms": [r["ms"] for r in results],
            "ranks_peak_rss_bytes": [r["peak_rss_bytes"] for r in results]}


# ---------------------------------------------------------------------------------- the run

def bench_model(args, model):
    model_file = os.path.join(ROOT, "examples", model + ".cairn")
    work = os.path.join(args.work, model)
    os.makedirs(work, exist_ok=True)
    warmup, steps = args.warmup, args.steps_of(model)
    data = os.path.join(work, "data")
    examples = write_data(data, image_shape(model_file), min(POOL, warmup + steps) * args.batch)
    entry = {"model": model, "batch": args.batch, "warmup": warmup, "steps": steps,
             "examples": examples, "systems": {s: {} for s in SYSTEMS}}
    exes = {}
    for ranks in args.ranks:
        exes[ranks] = os.path.join(work, f"{model}-{ranks}")
        built = build_cairn(args, model_file, ranks, exes[ranks])
        entry["systems"]["cairn"][str(ranks)] = dict(built, rounds=[])
        entry["systems"]["torch"][str(ranks)] = {"rounds": []}
        if "error" in built:
            progress(f"  Cairn {ranks} rank(s): {built['error']}")
    entry["load_before"] = os.getloadavg()
    for r in range(args.rounds):
        line = []
        for system in SYSTEMS:
            for ranks in args.ranks:
                config = entry["systems"][system][str(ranks)]
                if "error" in config:
                    continue  # failed to build or in an earlier round
                if system == "cairn":
                    result = run_cairn(args, exes[ranks], ranks, data, warmup, steps,
                                       os.path.join(work, f"metrics-{ranks}-{r}.json"))
                else:
                    result = run_torch(args, model, ranks, data, warmup, steps,
                                       f"{model}-{ranks}-{r}")
                if "error" in result:
                    config["error"] = result["error"]
                    progress(f"  {NAMES[system]} on {ranks} rank(s) failed: {result['error']}")
                    line.append(f"{NAMES[system]} {ranks}: failed")
                else:
                    config["rounds"].append(result)
                    line.append(f"{NAMES[system]} {ranks}: {result['ms']:.2f}")
        progress(f"  round {r + 1}/{args.rounds} ms/step: " + ", ".join(line))
    entry["load_after"] = os.getloadavg()
    return entry


def median_ms(config):
    return statistics.median(r["ms"] for r in config["rounds"]) if config["rounds"] else None


def summary(entry):
    """Per rank count: each system's median ms/step, examples/s, slowest/fastest round and
    scaling efficiency against its own 1 rank, and the Cairn/PyTorch ratios."""
    batch = entry["batch"]
    rows = {}
    ranks_list = sorted(entry["systems"]["cairn"], key=int)
    base = {s: median_ms(entry["systems"][s][ranks_list[0]]) for s in SYSTEMS}
    for key in ranks_list:
        ranks = int(key)
        row = {}
        for system in SYSTEMS:
            config = entry["systems"][system][key]
            ms = median_ms(config)
            if ms is None:
                row[system] = {"error": config.get("error", "not run")}
                continue
            all_ms = [r["ms"] for r in config["rounds"]]
            one = base[system]
            row[system] = {
                "ms": ms, "examples_per_second": 1000 * batch / ms,
                "spread": max(all_ms) / min(all_ms),
                "efficiency": (one / (ranks / int(ranks_list[0]) * ms)) if one else None,
            }
            if config.get("error"):
                row[system]["error"] = config["error"]
        if "ms" in row["cairn"] and "ms" in row["torch"]:
            row["ratio"] = row["cairn"]["ms"] / row["torch"]["ms"]
            pairs = zip(entry["systems"]["cairn"][key]["rounds"],
                        entry["systems"]["torch"][key]["rounds"])
            row["round_ratios"] = [c["ms"] / t["ms"] for c, t in pairs]
            row["median_round_ratio"] = statistics.median(row["round_ratios"])
        rows[key] = row
    return rows


# ----------------------------------------------------------------------------------- report

def mib(b):
    return f"{b / MiB:.2f}" if b is not None else "-"


def rank_words(ranks):
    return f"{ranks} rank" + ("" if int(ranks) == 1 else "s")


def report(results):
    started = datetime.datetime.fromisoformat(results["date"])
    entries = list(results["runs"].values())
    batch = entries[0]["batch"] if entries else None
    rounds = max((len(c["rounds"]) for e in entries for s in e["systems"].values()
                  for c in s.values()), default=0)
    lines = [
        "# Data-parallel training: Cairn replicas against PyTorch DDP (gloo)",
        "",
        f"- command: `{results['command']}`",
        f"- date: {started:%Y-%m-%d %H:%M} UTC, {results['seconds']:.0f} s",
        f"- commit: {results['commit']}",
        f"- machine: {results['cpu']}, {results['cores']} cores; {results['mpi']} "
        "(`mpirun --oversubscribe --bind-to none`, OMPI_MCA_mpi_yield_when_idle=1); PyTorch "
        f"{results['torch']} from PyPI ({results['python']}); one thread per process "
        "(`--threads 1`, torch.set_num_threads(1)), OMP_NUM_THREADS=1, OMP_WAIT_POLICY=passive "
        "for both",
        f"- global batch {batch} (each of R ranks takes batch/R examples of every batch); "
        "steps per run: " + ", ".join(f"{e['model']} {e['warmup']} warm-up + {e['steps']} "
                                      "timed" for e in entries)
        + f"; {rounds} interleaved rounds (Cairn on 1 then 2 ranks, then PyTorch on 1 then 2 "
        "processes, again), median round",
        "- Cairn: 1 rank is the executable built without `--replicas` (one process, no "
        "mpirun); R ranks `cairn build --replicas R` (default bucket 25 MiB) under `mpirun -np "
        "R`. ms/step: from rank 0's progress lines, (time at step W+N - time at step W) / N, "
        "the warm-up steps excluded; it includes Cairn's own data feeding (each batch's uint8 "
        "pixels copied and scaled into the arena from its in-memory data set), the "
        "gradient sums (MPI all-to-all and all-gather), the broadcast of rank 0's batch-norm "
        "buffers and the gather of each step's loss on rank 0.",
        "- PyTorch: the model's twin (test/reference/pytorch_models.py) with the model file's "
        "optimizer; 1 process is the plain model (no DDP), R processes DistributedDataParallel "
        "over gloo (bucket_cap_mb=25, broadcast_buffers=True), rank r taking the r-th B/R "
        "examples of every global batch, all batches made into tensors before the first step. "
        "ms/step: rank 0's time of N steps between two barriers / N, after W warm-up steps.",
        "- examples/s = batch / ms/step; scaling efficiency = throughput on R / (R x "
        "throughput on 1) = ms(1) / (R x ms(R)), each system against its own 1 rank; "
        "Cairn / PyTorch: the ratio of the median ms/step (below 1: Cairn is faster), and in "
        "brackets the median of the per-round ratios.",
    ]
    if any(int(k) > results["cores"] for e in entries for k in e["systems"]["cairn"]):
        lines.append(f"- **rank counts above {results['cores']} oversubscribe the cores**: "
                     "their ranks share cores, so their times are no speedup.")
    lines += ["", "## Summary", "",
              "| model | ranks | Cairn ms/step | Cairn ex/s | Cairn efficiency | "
              "PyTorch ms/step | PyTorch ex/s | PyTorch efficiency | Cairn / PyTorch |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for entry in entries:
        for key, row in entry["summary"].items():
            cells = []
            for system in SYSTEMS:
                s = row[system]
                if "ms" not in s:
                    cells += ["failed", "", ""]
                    continue
                cells += [f"{s['ms']:.2f}", f"{s['examples_per_second']:.0f}",
                          f"{s['efficiency']:.0%}" if s["efficiency"] is not None else ""]
            ratio = (f"{row['ratio']:.2f} ({row['median_round_ratio']:.2f})"
                     if "ratio" in row else "")
            lines.append(f"| {entry['model']} | {key} | " + " | ".join(cells) + f" | {ratio} |")
    lines += ["", "## Every round", "",
              "ms/step of each round in order; slowest / fastest round; Cairn's ranks' share of "
              "the training loop (warm-up included) spent blocked on the others (the metrics' "
              "devices_wait_seconds: gradient sums, buffers, the loss), median round.", "",
              "| model | system | ranks | rounds ms/step | median | slowest / fastest | "
              "waiting, per rank | load average before, after (1 min) |",
              "|---|---|---:|---|---:|---:|---|---|"]
    for entry in entries:
        for system in SYSTEMS:
            for key, config in entry["systems"][system].items():
                rounds_ms = ", ".join(f"{r['ms']:.2f}" for r in config["rounds"])
                if "error" in config:
                    rounds_ms += ("; then " if rounds_ms else "") + "failed"
                s = entry["summary"][key][system]
                by_time = sorted(config["rounds"], key=lambda r: r["ms"])
                middle = by_time[len(by_time) // 2] if by_time else {}
                wait = ", ".join(f"{w:.0%}" for w in middle.get("wait_share", []))
                lines.append(
                    f"| {entry['model']} | {NAMES[system]} | {key} | {rounds_ms} | "
                    + (f"{s['ms']:.2f} | {s['spread']:.2f} | " if "ms" in s else " | | ")
                    + f"{wait} | {entry['load_before'][0]:.2f}, {entry['load_after'][0]:.2f} |")
    lines += ["", "## Memory", "",
              "Cairn: the planned arena per rank (the metrics' planned_arena_bytes: the step's "
              "tensors at batch/R, weights and optimizer state included) and rank 0's peak RSS. "
              "PyTorch: rank 0's peak RSS (getrusage; it includes libtorch's code and data) and "
              "its growth over the RSS before the first step (what the steps added: "
              "activations, gradients, optimizer state, DDP's buckets, the allocator's caches). "
              "Last round.", "",
              "| model | ranks | Cairn arena MiB per rank | Cairn peak RSS MiB | "
              "PyTorch peak RSS MiB | PyTorch growth MiB |",
              "|---|---:|---:|---:|---:|---:|"]
    for entry in entries:
        for key in entry["systems"]["cairn"]:
            cairn = entry["systems"]["cairn"][key]["rounds"]
            torch = entry["systems"]["torch"][key]["rounds"]
            c = cairn[-1] if cairn else {}
            t = torch[-1] if torch else {}
            growth = (t["peak_rss_bytes"] - t["rss_before_bytes"]) if t else None
            lines.append(f"| {entry['model']} | {key} | {mib(c.get('planned_arena_bytes'))} | "
                         f"{mib(c.get('peak_rss_bytes'))} | {mib(t.get('peak_rss_bytes'))} | "
                         f"{mib(growth)} |")
    failures = [(e["model"], s, k, c["error"]) for e in entries
                for s in SYSTEMS for k, c in e["systems"][s].items() if "error" in c]
    if failures:
        lines += ["", "## Failures", ""] + [
            f"- {model}, {NAMES[system]} on {rank_words(key)}: `{error}`"
            for model, system, key, error in failures]
    lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ main

def probe_torch(python):
    """(torch version, Python version) of the workers' interpreter; exits when it has no torch
    with gloo."""
    out = subprocess.run([python, "-c", "import sys, torch, torch.distributed as d; "
                          "print(torch.__version__, d.is_gloo_available(), "
                          "sys.version.split()[0])"], capture_output=True, text=True)
    words = out.stdout.split()
    if (out.returncode or len(words) != 3 or words[1] != "True"
            or not re.match(r"([2-9]|\d\d)\.", words[0])):
        raise SystemExit(f"bench/data_parallel: {python} has no PyTorch 2.x with gloo "
                         f"({tail(out.stdout + out.stderr) or 'no output'}); run "
                         "bench/data_parallel/run.sh, which makes build/bench-torch-venv")
    return words[0], f"Python {words[2]}"


def main_run(args):
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.perf_counter()
    steps = {}
    for item in args.steps:
        model, _, count = item.rpartition("=")
        steps[model or "*"] = int(count)
    args.steps_of = lambda model: steps.get(model, steps.get("*", STEPS.get(model,
                                                                           DEFAULT_STEPS)))
    if any(args.batch % r for r in args.ranks):
        raise SystemExit(f"bench/data_parallel: --batch {args.batch} is not divisible by every "
                         f"rank count of {args.ranks}")
    if args.warmup < 1:
        raise SystemExit("bench/data_parallel: --warmup must be at least 1")
    if any(r > 1 for r in args.ranks) and not shutil.which("mpirun"):
        raise SystemExit("bench/data_parallel: no mpirun (Debian package openmpi-bin)")
    if not os.path.exists(os.path.join(FASHION, "train-images-idx3-ubyte.gz")):
        raise SystemExit(f"bench/data_parallel: no Fashion-MNIST in {FASHION} "
                         "(Debian package dataset-fashion-mnist)")
    if not os.access(args.cairn, os.X_OK):
        raise SystemExit(f"bench/data_parallel: no cairn at {args.cairn} (scripts/build.sh)")
    torch_version, python_version = probe_torch(args.python)
    mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True)
    args.work = tempfile.mkdtemp(prefix="cairn-data-parallel-")
    head = commit()
    results = {"commit": head, "cpu": cpu_name(), "cores": os.cpu_count(),
               "command": args.command, "date": str(started), "torch": torch_version,
               "python": python_version,
               "mpi": re.sub(r"^mpirun \((.*)\)", r"\1",
                             (mpi.stdout.splitlines() or ["Open MPI"])[0]),
               "runs": {}}
    name = f"data_parallel-{started:%Y-%m-%d}-{head.split()[0]}"
    out = args.out or os.path.join(ROOT, "bench", "results", name + ".md")
    for model in args.models:
        progress(f"{model}: batch {args.batch}, {args.warmup} warm-up + "
                 f"{args.steps_of(model)} timed steps, ranks {args.ranks}")
        results["runs"][model] = bench_model(args, model)
        results["seconds"] = time.perf_counter() - clock
        for entry in results["runs"].values():
            entry["summary"] = summary(entry)
        with open(os.path.splitext(out)[0] + ".json", "w") as f:
            json.dump(results, f, indent=1)
        with open(out, "w") as f:
            f.write(report(results))
    if args.keep:
        progress(f"kept {args.work}")
    else:
        shutil.rmtree(args.work)
    progress(f"wrote {out} and its .json ({time.perf_counter() - clock:.0f} s)")


def main_report(args):
    with open(args.json) as f:
        results = json.load(f)
    out = os.path.splitext(args.json)[0] + ".md"
    with open(out, "w") as f:
        f.write(report(results))
    print(f"bench/data_parallel: wrote {out}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--models", nargs="+", default=["mlp", "cnn"])
    r.add_argument("--batch", type=int, default=64, help="the global batch")
    r.add_argument("--ranks", nargs="+", type=int, default=[1, 2])
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--steps", nargs="+", default=[], metavar="[MODEL=]STEPS",
                   help=f"timed steps per run, for every model or one (default {STEPS}, "
                        f"else {DEFAULT_STEPS})")
    r.add_argument("--warmup", type=int, default=10, help="untimed steps before them")
    r.add_argument("--bucket-mb", type=int, default=25,
                   help="gradient bucket: DDP's bucket_cap_mb and cairn's --bucket (MiB)")
    r.add_argument("--python", default=os.path.join(ROOT, "build", "bench-torch-venv", "bin",
                                                    "python"),
                   help="the interpreter of the PyTorch workers")
    r.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    r.add_argument("--out")
    r.add_argument("--keep", action="store_true", help="keep the executables, data and logs")
    r.add_argument("--command", default="bench/data_parallel/run.sh")
    w = sub.add_parser("worker")
    w.add_argument("--model", required=True)
    w.add_argument("--batch", type=int, required=True)
    w.add_argument("--rank", type=int, required=True)
    w.add_argument("--world", type=int, required=True)
    w.add_argument("--store", required=True)
    w.add_argument("--data", required=True)
    w.add_argument("--warmup", type=int, required=True)
    w.add_argument("--steps", type=int, required=True)
    w.add_argument("--bucket-mb", type=int, default=25)
    w.add_argument("--out", required=True)
    p = sub.add_parser("report", help="write FILE.md again from FILE.json")
    p.add_argument("json")
    args = parser.parse_args()
    if args.what == "report":
        main_report(args)
    elif args.what == "worker":
        worker(args)
    else:
        args.ranks = sorted(set(args.ranks))
        args.models = list(dict.fromkeys(args.models))
        main_run(args)


if __name__ == "__main__":
    main()
