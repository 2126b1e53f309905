#!/usr/bin/python3
"""Training-step time on the CPU: Cairn's executables against PyTorch eager, same machine.

  bench.py run --cairn build/bin/cairn --out bench/results/cpu-step-DATE.md
      For each model and batch: Cairn's ms/step is the difference of two `EXE train` runs
      (--steps WARM and --steps WARM+N, Fashion-MNIST, the metrics' "seconds"), so start-up
      and warm-up cancel. PyTorch trains the same model (test/reference/pytorch_models.py,
      the model file's optimizer) on random batches of the same shape for WARM steps, then is
      timed over N, at Cairn's thread count, in two environments: as installed ("default")
      and "tuned" (OpenBLAS's AVX-512 kernels, which Cairn's executables select themselves,
      and OMP_WAIT_POLICY=passive, without which PyTorch's spinning OpenMP threads starve
      OpenBLAS's on a small machine). The ratio is PyTorch's best over Cairn's. Each time is
      the fastest of --repeats (3) timings, as other work on a shared machine only slows.
      The GEMM FLOPs of a step are counted analytically (forward 2*M*N*K per Linear/Conv2d,
      backward twice that); divided by Cairn's step time they give its achieved rate, set
      against the machine's sgemm peak (torch.mm on 2048x2048 float32, best environment).
  bench.py torch ... / bench.py sgemm ...
      The PyTorch measurements, run by `run` in a child process per environment (the
      variables only act before the libraries load); each prints one JSON object.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import commit, cpu_name  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENVIRONMENTS = {"default": {},
                "tuned": {"OPENBLAS_CORETYPE": "SkylakeX", "OMP_WAIT_POLICY": "passive"}}


def torch_step_time(args):
    """PyTorch's ms/step and GEMM FLOPs/step for one model and batch."""
    import torch
    import torch.nn.functional as F
    from torch import nn
    sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
    from check_step_agreement import make_model_and_optimizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model, in_shape, opt = make_model_and_optimizer(args.model, args.examples)
    flops = []

    def count(module, inputs, output):  # forward GEMM FLOPs: 2 * output elements * K
        k = module.in_features if isinstance(module, nn.Linear) else module.weight[0].numel()
        flops.append(2 * output.numel() * k)

    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            m.register_forward_hook(count)
    pool = [(torch.rand(args.batch, *in_shape), torch.randint(0, 10, (args.batch,)))
            for _ in range(8)]

    def step(i):
        x, y = pool[i % len(pool)]
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    model.train()
    step(0)
    gemm_flops = 3 * sum(flops)  # forward, and backward's two GEMMs per layer
    for i in range(1, args.warmup):
        step(i)
    best = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        for i in range(args.steps):
            step(i)
        best = min(best, time.perf_counter() - start)
    return {"ms_per_step": 1000 * best / args.steps, "gemm_flops": gemm_flops}


def sgemm_peak(args):
    """Best GFLOP/s of torch.mm on 2048x2048 float32 over a few repetitions."""
    import torch
    torch.set_num_threads(args.threads)
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    best = 0.0
    for _ in range(args.repeats):
        torch.mm(a, b)
        start = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * 2048 ** 3 / (time.perf_counter() - start) / 1e9)
    return {"gflops": best}


def child(argv, env_name):
    """Runs `bench.py ARGV` in environment `env_name`; its JSON result."""
    env = dict(os.environ, **ENVIRONMENTS[env_name])
    out = subprocess.run([sys.executable, os.path.abspath(__file__)] + [str(a) for a in argv],
                         env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def cairn(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          check=True).stdout


def cairn_step_time(args, model, batch):
    """(ms/step, metrics of the longer run) of Cairn's executable."""
    work = os.path.join(args.work, f"{model}-{batch}")
    os.makedirs(work, exist_ok=True)
    exe, weights = os.path.join(work, model), os.path.join(work, "init.safetensors")
    cairn([args.cairn, "build", os.path.join(args.examples, model + ".cairn"), "-o", exe,
           "--batch", batch])
    cairn([exe, "init", "--seed", 0, "--save", weights])
    best = float("inf")
    for _ in range(args.repeats):
        runs = []
        for steps in (args.warmup, args.warmup + args.steps):
            metrics = os.path.join(work, f"metrics-{steps}.json")
            cairn([exe, "train", "--steps", steps, "--seed", 0, "--load", weights,
                   "--threads", args.threads, "--metrics", metrics, "--log-every", 1000000])
            with open(metrics) as f:
                runs.append(json.load(f))
        best = min(best, runs[1]["seconds"] - runs[0]["seconds"])
    return 1000 * best / args.steps, runs[1]


def machine():
    return f"{cpu_name()}, {os.cpu_count()} cores"


def run(args):
    date = datetime.date.today().isoformat()
    out = args.out or os.path.join(ROOT, "bench", "results", f"cpu-step-{date}.md")
    load = os.getloadavg()
    common = ["--threads", args.threads, "--examples", args.examples]
    peak = {e: child(["sgemm", "--threads", args.threads, "--repeats", 10], e)["gflops"]
            for e in ENVIRONMENTS}
    rows, blas_core = [], "?"
    for model in args.models:
        for batch in args.batches:
            c_ms, metrics = cairn_step_time(args, model, batch)
            blas_core = metrics.get("blas_core", "?")
            t = {e: child(["torch", "--model", model, "--batch", batch, "--warmup", args.warmup,
                           "--steps", args.steps, "--repeats", args.repeats] + common, e)
                 for e in ENVIRONMENTS}
            best = min(r["ms_per_step"] for r in t.values())
            gflop = t["default"]["gemm_flops"] / 1e9
            rate = gflop / (c_ms / 1000)
            rows.append([model, str(batch), f"{gflop:.3f}", f"{c_ms:.2f}",
                         f"{t['default']['ms_per_step']:.2f}", f"{t['tuned']['ms_per_step']:.2f}",
                         f"{best / c_ms:.2f}x", f"{rate:.1f}", f"{100 * rate / max(peak.values()):.0f}%"])
            print(" ".join(rows[-1]), flush=True)
    header = ["model", "batch", "GEMM GFLOP/step", "Cairn ms/step", "PyTorch ms/step (default)",
              "PyTorch ms/step (tuned)", "speed-up (PyTorch best / Cairn)", "Cairn GEMM GFLOP/s",
              "of sgemm peak"]
    lines = [
        "# CPU training step: Cairn against PyTorch eager",
        "",
        f"- command: `{args.command}`",
        f"- machine: {machine()}; load average before the run {load[0]:.2f}, after "
        f"{os.getloadavg()[0]:.2f} (other work on the machine skews every number)",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, "
        f"commit {commit()}",
        f"- threads: {args.threads} for both; Cairn's BLAS core: {blas_core}",
        f"- Cairn: `EXE train --steps {args.warmup + args.steps}` minus `--steps {args.warmup}` "
        f"(Fashion-MNIST), over {args.steps} steps; PyTorch {child(['version'], 'default')['torch']}: "
        f"{args.steps} steps after {args.warmup} warm-up steps, random batches of the same shape; "
        f"each the fastest of {args.repeats} timings",
        "- PyTorch environments: default = as installed; tuned = "
        + ", ".join(f"{k}={v}" for k, v in ENVIRONMENTS["tuned"].items()),
        "- sgemm peak (torch.mm 2048x2048 f32, best of 10): "
        + ", ".join(f"{e} {g:.1f} GFLOP/s" for e, g in peak.items()),
        "- GEMM FLOPs per step: Linear/Conv2d forward 2*M*N*K, backward twice that; "
        "\"Cairn GEMM GFLOP/s\" is that divided by Cairn's step time (the whole step, so a "
        "lower bound on its GEMM rate), \"of sgemm peak\" against the best peak above",
        "",
        "| " + " | ".join(header) + " |",
        "|" + " --- |" * 2 + " ---: |" * (len(header) - 2),
    ] + ["| " + " | ".join(r) + " |" for r in rows]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"\nwrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run", help="the whole benchmark; writes the results file")
    r.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    r.add_argument("--work", default="/tmp/cairn-bench-cpu-step")
    r.add_argument("--models", nargs="+", default=["mlp", "cnn"])
    r.add_argument("--batches", nargs="+", type=int, default=[64, 256])
    r.add_argument("--out", help="results file (default bench/results/cpu-step-DATE.md)")
    r.add_argument("--command", default="bench/cpu_step/run.sh", help="for the results file")
    t = sub.add_parser("torch", help="PyTorch's step time (JSON)")
    t.add_argument("--model", required=True)
    t.add_argument("--batch", type=int, required=True)
    for p in (r, t):
        p.add_argument("--warmup", type=int, default=20)
        p.add_argument("--steps", type=int, default=200)
        p.add_argument("--repeats", type=int, default=3,
                       help="time the steps this many times and keep the fastest")
    s = sub.add_parser("sgemm", help="torch.mm's GFLOP/s (JSON)")
    s.add_argument("--repeats", type=int, default=10)
    sub.add_parser("version", help="torch's version (JSON)")
    for p in (r, t, s):
        p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    for p in (r, t):
        p.add_argument("--examples", default=os.path.join(ROOT, "examples"))
    args = ap.parse_args()
    if args.mode == "run":
        run(args)
    elif args.mode == "torch":
        print(json.dumps(torch_step_time(args)))
    elif args.mode == "sgemm":
        print(json.dumps(sgemm_peak(args)))
    else:
        import torch
        print(json.dumps({"torch": torch.__version__}))


if __name__ == "__main__":
    main()
