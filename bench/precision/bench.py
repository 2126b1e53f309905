"""Accuracy of mixed-precision training: the same example trained by Cairn's executables
built in float32 and in half precision, same seed, same data, same machine.

  bench.py [--models mlp cnn] [--precisions f32 bf16 f16] [--epochs 2] [--seed 0]
           [--noise-seeds 1 ...] [--data DIR] [--threads N] [--cairn CAIRN] [--out FILE.md]
      Run by bench/precision/run.sh (plain /usr/bin/python3, no packages). A copy of the
      compiler is taken first (so a rebuild of build/bin/cairn during the run mixes no two
      compilers). Per model (examples/M.cairn) and precision P:
      - `cairn build examples/M.cairn --precision P -o EXE` (its wall time: build s). A
        precision the compiler refuses (f16 before Cairn had a loss scaler) is recorded with
        the compiler's message, and the run goes on.
      - `EXE train --data DIR --epochs E --seed S --threads T --metrics M.json`: E epochs of
        Fashion-MNIST (Debian's dataset-fashion-mnist, /usr/share/datasets/fashion-mnist) at
        the model file's batch, the same seed for every precision (initial weights,
        shuffling, dropout), then the executable's own evaluation on the test split (10,000
        images). From M.json: test accuracy and test loss, the last training batch's loss
        (final_loss), the training seconds and examples/s, the planned arena; the wall time
        of the whole command (loading, training, evaluation) is measured here.
      - Against the float32 run of the same model: the test accuracy's difference in points
        (100 x the difference of the fractions); the goal (issue 13): within GOAL_POINTS.
      - The scale of that difference: float32 trained again with each --noise-seeds seed
        (default 1; none: --noise-seeds with no value), the same executable, its accuracy
        against the main seed's float32 run: how far two float32 runs land apart.
      Writes FILE.md (default bench/results/precision-DATE-COMMIT.md) and FILE.json (every
      number and command); the markdown is rewritten after each run, so a run cut short
      keeps what it did.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import ROOT, commit, cpu_name  # noqa: E402

MODELS = ["mlp", "cnn"]
PRECISIONS = ["f32", "bf16", "f16"]
GOAL_POINTS = 1.0  # issue 13: half precision's test accuracy within 1 point of float32's
DATA = "/usr/share/datasets/fashion-mnist"
MiB = 1 << 20


def copy_compiler(cairn, work):
    """A private copy of the compiler, retried while a rebuild replaces it."""
    dest = os.path.join(work, "cairn")
    for attempt in range(30):
        try:
            shutil.copy2(cairn, dest)
            return dest
        except OSError:
            if attempt == 29:
                raise
            time.sleep(10)
    return dest


def run_cmd(cmd, timeout):
    """(exit code, stdout + stderr, seconds) of a command."""
    began = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - began
    except subprocess.TimeoutExpired as e:
        out = "".join(x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
                      for x in (e.stdout, e.stderr))
        return 124, out + f"\n(timed out after {timeout} s)", time.perf_counter() - began


def first_error(text):
    """The compiler's message: its first line with 'error', else its first lines."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    return (errors or lines or ["(no output)"])[0]


def measure(args, model, precision, work, seed):
    """Build (once per model and precision) and train one model in one precision; a dict
    of what happened."""
    exe = os.path.join(work, f"{model}-{precision}")
    source = os.path.join(ROOT, "examples", model + ".cairn")
    build = [args.cairn_run, "build", source, "--precision", precision, "-o", exe]
    row = {"model": model, "precision": precision, "seed": seed,
           "build_command": " ".join(["cairn", "build", f"examples/{model}.cairn",
                                      "--precision", precision, "-o", "EXE"])}
    if not os.path.exists(exe):
        code, out, seconds = run_cmd(build, args.timeout)
        row["build_seconds"] = seconds
        if code != 0:
            row["refused"] = first_error(out)
            row["build_exit_code"] = code
            row["build_output"] = out[-2000:]
            return row
    metrics = os.path.join(work, f"{model}-{precision}-{seed}.json")
    train = [exe, "train", "--data", args.data, "--epochs", str(args.epochs), "--seed",
             str(seed), "--threads", str(args.threads), "--metrics", metrics]
    row["train_command"] = " ".join(["EXE"] + train[1:-1] + ["M.json"])
    row["load_before_train"] = os.getloadavg()[0]
    code, out, seconds = run_cmd(train, args.timeout)
    row["wall_seconds"] = seconds
    if code != 0 or not os.path.exists(metrics):
        row["error"] = first_error(out)
        row["train_exit_code"] = code
        row["train_output"] = out[-2000:]
        return row
    with open(metrics) as f:
        m = json.load(f)
    row["metrics"] = m
    for key in ("test_accuracy", "test_loss", "final_loss", "seconds", "examples_per_second",
                "steps", "skipped_steps", "loss_scale", "planned_arena_bytes",
                "peak_rss_bytes"):
        row[key] = m.get(key)
    return row


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def write_results(args, out, started, rows, load_before, seconds, cairn_built):
    f32 = {r["model"]: r for r in rows if r["precision"] == "f32" and r["seed"] == args.seed}
    table, notes, verdict = [], [], []
    for r in rows:
        ref = f32.get(r["model"])
        acc, ref_acc = r.get("test_accuracy"), ref and ref.get("test_accuracy")
        diff = None if acc is None or ref_acc is None else 100 * (acc - ref_acc)
        goal = "-"
        if r["precision"] != "f32" and diff is not None:
            goal = "yes" if abs(diff) <= GOAL_POINTS else "**no**"
        if "refused" in r or "error" in r:
            what = "refused" if "refused" in r else "failed"
            notes.append(r.get("refused") or r.get("error"))
            cell = f"{what} ({len(notes)})"
            table.append([r["model"], r["precision"], str(r["seed"]), cell, "-", "-", "n/a",
                          "-", "-", "n/a", "n/a", fmt(r.get("build_seconds"), ".1f"), "n/a"])
            continue
        table.append([r["model"], r["precision"], str(r["seed"]), f"{100 * acc:.2f}",
                      fmt(r["test_loss"], ".4f"), fmt(r["final_loss"], ".4f"),
                      "(reference)" if r is ref else fmt(diff, "+.2f"), goal,
                      "-" if r.get("skipped_steps") is None
                      else f"{r['skipped_steps']}, {r.get('loss_scale'):g}",
                      fmt(r["seconds"], ".1f"), fmt(r["wall_seconds"], ".1f"),
                      fmt(r.get("build_seconds"), ".1f"),
                      fmt(r["planned_arena_bytes"] and r["planned_arena_bytes"] / MiB, ".2f")])
    noise = [(r, 100 * (r["test_accuracy"] - f32[r["model"]]["test_accuracy"]))
             for r in rows if r["precision"] == "f32" and r["seed"] != args.seed
             and r.get("test_accuracy") is not None
             and f32.get(r["model"], {}).get("test_accuracy") is not None]
    if noise:
        verdict.append("- float32 against itself, other seeds (the scale of a difference): "
                       + ", ".join(f"{r['model']} seed {r['seed']} {d:+.2f}"
                                   for r, d in noise) + " points.")
    for p in args.precisions[1:]:
        sel = [r for r in rows if r["precision"] == p]
        judged = [(r, 100 * (r["test_accuracy"] - f32[r["model"]]["test_accuracy"]))
                  for r in sel if r.get("test_accuracy") is not None
                  and f32.get(r["model"], {}).get("test_accuracy") is not None]
        refused = [r for r in sel if "refused" in r]
        if judged:
            met = [r for r, d in judged if abs(d) <= GOAL_POINTS]
            verdict.append(
                f"- {p}: test accuracy within {GOAL_POINTS:g} point of float32's in "
                f"{len(met)} of {len(judged)} models ("
                + ", ".join(f"{r['model']} {d:+.2f}" for r, d in judged) + ")"
                + ("." if len(met) == len(judged) else "; not met: " + ", ".join(
                    r["model"] for r, d in judged if abs(d) > GOAL_POINTS) + "."))
        if refused:
            verdict.append(f"- {p}: the compiler refused it (`cairn build --precision {p}`): "
                           f"\"{refused[0]['refused']}\"")
        failed = [r for r in sel if "error" in r]
        if failed:
            verdict.append(f"- {p}: failed: " + "; ".join(
                f"{r['model']}: {r['error']}" for r in failed))

    def md(head, body, left=2):
        return (["| " + " | ".join(head) + " |",
                 "|" + " --- |" * left + " ---: |" * (len(head) - left)]
                + ["| " + " | ".join(b) + " |" for b in body])

    lines = [
        "# Mixed-precision training: test accuracy of Cairn's executables in f32 and half "
        "precision",
        "",
        f"- command: `{args.command}`",
        f"- machine: {os.cpu_count()} cores, {cpu_name()}; load average {load_before:.2f} "
        f"before, {os.getloadavg()[0]:.2f} after; the run took {seconds:.0f} s",
        f"- date: {started:%Y-%m-%d %H:%M} UTC, commit {commit()}",
        f"- Cairn: `{os.path.relpath(args.cairn, ROOT)}` ({cairn_built}, copied before the "
        "run)",
        f"- training: examples/M.cairn at the model file's batch and optimizer, "
        f"`EXE train --data {args.data} --epochs {args.epochs} --seed {args.seed} --threads "
        f"{args.threads}` (Fashion-MNIST, 60,000 training and 10,000 test images; the same "
        "seed for initial weights, shuffling and dropout in every precision)"
        + (f"; float32 also with seed {', '.join(map(str, args.noise_seeds))}, the scale of "
           "a difference" if args.noise_seeds else ""),
        "",
        "Columns: **test acc %** and **test loss**: the executable's evaluation on the test "
        "split after training (eval mode); **final loss**: the last training batch's loss; "
        f"**vs f32**: test accuracy minus float32's (seed {args.seed}), in points; **goal**: "
        "within "
        f"{GOAL_POINTS:g} point (issue 13); **train s**: the executable's own training "
        "seconds (`seconds` of --metrics); **wall s**: the whole `EXE train` command "
        "(loading, training, evaluation); **skipped, loss scale**: where the executable "
        "scales the loss (f16), the steps it skipped for an inf or NaN gradient and the "
        "scale at the end (`skipped_steps`, `loss_scale` of --metrics); "
        "**build s**: `cairn build --precision P` (the C++ "
        "compile included); **arena MiB**: the executable's planned arena (all its steps). "
        "bf16, f16: matmuls, convolutions and the values between them in the half type "
        "(stored in half, computed in float32 on the CPU), float32 master weights and "
        "optimizer state, batch norm statistics, softmax and the loss in float32; f16 with "
        "a dynamic loss scale (`cairn build --help`).",
        "",
    ] + verdict + [
        "",
    ] + md(["model", "precision", "seed", "test acc %", "test loss", "final loss",
            "vs f32 (points)", "goal", "skipped, loss scale", "train s", "wall s", "build s",
            "arena MiB"], table,
           left=3) + [""] + [
        f"({i + 1}) {n}" for i, n in enumerate(notes)] + [
        "",
        "Commands, with the load average (1 min) as each training began (the machine is "
        "shared: a load above the core count slows the wall times):",
        "",
    ] + [f"- {r['model']} {r['precision']} seed {r['seed']}: `{r['build_command']}`"
         + (f"; `{r['train_command']}` (load {r['load_before_train']:.2f})"
            if "train_command" in r else "") for r in rows]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    raw = {"command": args.command, "machine": f"{os.cpu_count()} cores, {cpu_name()}",
           "date": f"{started:%Y-%m-%d %H:%M} UTC", "commit": commit(),
           "cairn": cairn_built, "epochs": args.epochs, "seed": args.seed,
           "noise_seeds": args.noise_seeds,
           "threads": args.threads, "data": args.data, "goal_points": GOAL_POINTS,
           "seconds": seconds, "rows": rows}
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--precisions", nargs="+", default=PRECISIONS, choices=PRECISIONS,
                    help="float32 is always run first, as the reference")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--noise-seeds", nargs="*", type=int, default=[1],
                    help="float32 trained again with these seeds (default 1)")
    ap.add_argument("--threads", type=int, default=0, help="EXE --threads (0: every core)")
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per command")
    ap.add_argument("--out", help="results file (default "
                                  "bench/results/precision-DATE-COMMIT.md)")
    ap.add_argument("--command", default="bench/precision/run.sh", help="for the results file")
    ap.add_argument("--keep", action="store_true", help="keep the executables and metrics")
    args = ap.parse_args()
    args.precisions = ["f32"] + [p for p in PRECISIONS[1:] if p in args.precisions]
    if not os.path.isdir(args.data):
        raise SystemExit(f"bench/precision: no data in {args.data} (Debian's "
                         "dataset-fashion-mnist, scripts/install-deps.sh installs it)")
    if not os.path.exists(args.cairn):
        raise SystemExit(f"bench/precision: no compiler at {args.cairn} (scripts/build.sh)")
    started = datetime.datetime.now(datetime.timezone.utc)
    head = commit().split()[0]
    out = args.out or os.path.join(ROOT, "bench", "results",
                                   f"precision-{started:%Y-%m-%d}-{head}.md")
    work = tempfile.mkdtemp(prefix="cairn-bench-precision-")
    cairn_built = datetime.datetime.fromtimestamp(
        os.path.getmtime(args.cairn), datetime.timezone.utc).strftime("built %Y-%m-%d %H:%M UTC")
    args.cairn_run = copy_compiler(args.cairn, work)
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    rows = []
    try:
        runs = [(m, p, args.seed) for m in args.models for p in args.precisions]
        runs += [(m, "f32", s) for m in args.models for s in args.noise_seeds
                 if s != args.seed]
        for model, precision, seed in runs:
            print(f"bench/precision {time.strftime('%H:%M:%S')}: {model} {precision} "
                  f"seed {seed}", file=sys.stderr, flush=True)
            rows.append(measure(args, model, precision, work, seed))
            summary = {k: v for k, v in rows[-1].items()
                       if k not in ("metrics", "build_output", "train_output")}
            print(json.dumps(summary), flush=True)
            lines = write_results(args, out, started, rows, load_before,
                                  time.perf_counter() - began, cairn_built)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))
    print(f"\nwrote {out} and {os.path.splitext(out)[0]}.json")


if __name__ == "__main__":
    main()
