"""A model split across N devices (`cairn build|plan --devices N`, one MPI process per device):
memory per device, transfers, step time and the largest batch that fits, against one device.

  bench.py run [--models M ...] [--batch B] [--devices 1 2 4] [--rounds R] [--steps M=S ...]
               [--fit-memory SIZE ...] [--cairn CAIRN] [--out FILE.md] [--keep]
      Run by bench/partition/run.sh with /usr/bin/python3 (the standard library only). For
      each model (examples/M.cairn) at batch B:
      - Memory: `cairn plan M --batch B --devices N --memory-report R.json` for each N: every
        device's arena_bytes and persistent_bytes (the executable's arena: the training step,
        the forward and the eval loss sharing it, as each process allocates it); the largest
        arena of the N devices against the one-device arena (N = 1 is `--devices 1`, the
        placed model on one device, the reference a split is checked against), and the sum of
        the N arenas against it.
      - Transfers: per device, the bytes of every entry of its `transfers` list whose step is
        train_step, sends and receives, summed: what one training step moves in and out of
        that device. The largest of the devices is reported.
      - Step time: `cairn build M --batch B --devices N -o EXE` for each N; then --rounds
        rounds, each running every N in turn (1, 2, 4, 1, 2, 4, ...) so that the devices'
        counts are timed next to each other: `EXE train --data D --steps S --threads 1
        --metrics F.json` for N = 1 (one process, no mpirun), `mpirun --oversubscribe
        --bind-to none -np N EXE train ...` otherwise (one thread per rank,
        OMP_WAIT_POLICY=passive). ms/step: rank 0's `seconds` (the training loop, from the
        first step to the last, setup and evaluation excluded) / S; the fastest round is
        reported, with the ratio against one device's fastest. D: a tiny data set of the
        model's image shape (test/tools/Inputs/write_tiny_dataset.py), train split only (no
        evaluation). The loss is broadcast to every rank each step, so the steps are in lock
        step; without micro-batches the stages of a step run one after another, so on a
        machine with enough cores the best a split can do is one device's time plus the
        transfers.
      - Fit: `cairn plan M --batch B --devices N --fit SIZE --no-recompute` for each N and
        SIZE (default 64MiB): the largest batch whose every device's arena fits SIZE, against
        one device's.
      Writes FILE.md and FILE.json (default bench/results/partition-<date>-<commit>.*) with
      the command, the date, the commit and the machine (bench/provenance.py), and the load
      average before and after each model's timing (the machine may be shared).
      - Pipelines (--micro-batches M, default 4; models of --pipeline-models): for each N > 1
        and each schedule of --pipelines (gpipe, 1f1b), `cairn plan|build M --batch B
        --devices N --micro-batches M --pipeline P`: every device's arena, and in interleaved
        rounds (each schedule in turn, MPI mode yield) the step time and, from the metrics'
        devices_wait_seconds, the share of the training loop each device spent blocked in
        sends, receives and the step's loss broadcast: the measured bubble (plus the copies,
        and on an oversubscribed machine the ranks' competition for cores), next to the
        ideal (N - 1) / (M + N - 1) of a pipeline of equal stages.
      - The PyTorch peer (--python: a PyTorch 2.x with gloo; run.sh passes
        build/bench-torch-venv's): for the pipelines of the models and device counts
        torch_pipeline.SPLITS has (mlp, cnn and the transformer on 2 and 4 devices), PyTorch's
        torch.distributed.pipelining with the same schedule (ScheduleGPipe, Schedule1F1B), the
        same micro-batches and the same cuts (checked against the values each of Cairn's
        devices sends forward in its plan; a different cut is reported, not timed), one
        process per stage over gloo (torch_pipeline.py): each rank's peak bytes live during a
        step (once), and its ms/step timed in the same rounds as Cairn's schedules,
        interleaved. Elsewhere the report says why there is no peer.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from provenance import ROOT, commit, cpu_name  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "tools", "Inputs"))
import write_tiny_dataset  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_pipeline  # noqa: E402

MiB = 1 << 20
# Steps per timed run by model, so that one run takes about a second or more at one thread on
# one device of this machine (resnet18's CPU step at batch 64 takes about three seconds).
STEPS = {"mlp": 400, "cnn": 30, "transformer": 30, "resnet18": 3, "deep_mlp": 20,
         "autoencoder": 100}
DEFAULT_STEPS = 10
# Open MPI as root and without the single-copy mechanism that containers' ptrace rules forbid;
# ranks take one thread each and do not spin in OpenMP (as check_partition_bit_identical.py).
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMP_WAIT_POLICY": "passive",
}
# The cairn binary may be rebuilt while this runs: a command that cannot start (or that
# dies of a signal) is tried again this many times, RETRY_SECONDS apart.
# How the ranks wait for a message, each timed (--mpi-modes): Open MPI's default polls
# without giving up the core; yield calls sched_yield while it polls (mpi_yield_when_idle,
# which Open MPI also turns on by itself where it knows the node is oversubscribed).
MPI_MODES = {"one process": {}, "default": {}, "yield": {"OMPI_MCA_mpi_yield_when_idle": "1"}}
RETRIES = 5
RETRY_SECONDS = 10


def run(cmd, ok=(0,), fail=True, **kw):
    """Runs cmd; returns the CompletedProcess when its exit code is in ok. Retries a command
    that could not start or died of a signal (a binary being relinked); then exits, or with
    fail=False returns the failure's words (a string)."""
    for attempt in range(RETRIES + 1):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, **kw)
        except OSError as error:  # ETXTBSY, ENOENT while the binary is replaced
            failure = str(error)
        else:
            if out.returncode in ok:
                return out
            failure = f"exit {out.returncode}:\n{out.stdout}{out.stderr}"
            if out.returncode > 0 and out.returncode not in (126, 127):
                break
        if attempt < RETRIES:
            print(f"bench/partition: {cmd[0]} failed ({failure.splitlines()[0]}), retrying",
                  file=sys.stderr, flush=True)
            time.sleep(RETRY_SECONDS)
    if not fail:
        return failure
    raise SystemExit(f"bench.py: {' '.join(cmd)} failed, {failure}")


# ----------------------------------------------------------------------------- measurements

def plan_devices(args, model_file, devices, work):
    """Each device's arena, persistent bytes and train_step transfer bytes for --devices N."""
    report = os.path.join(work, f"plan-{devices}.json")
    run([args.cairn, "plan", model_file, "--batch", str(args.batch), "--devices", str(devices),
         "--memory-report", report])
    with open(report) as f:
        plans = json.load(f)["devices"]
    rows = []
    for plan in plans:
        train = [t for t in plan.get("transfers", []) if t["step"] == "train_step"]
        rows.append({
            "device": plan["device"],
            "arena_bytes": plan["arena_bytes"],
            "persistent_bytes": plan["persistent_bytes"],
            "send_bytes": sum(t["bytes"] for t in train if t["kind"] == "send"),
            "receive_bytes": sum(t["bytes"] for t in train if t["kind"] == "receive"),
            "sends": sum(t["kind"] == "send" for t in train),
            "receives": sum(t["kind"] == "receive" for t in train),
            "crossing": sorted({t["buffer"] for t in train if t["kind"] == "send"}),
        })
    return rows


def fit(args, model_file, devices, size):
    """The largest batch whose every device fits `size` (None when not even batch 1 does) and
    cairn's words."""
    out = run([args.cairn, "plan", model_file, "--batch", str(args.batch), "--devices",
               str(devices), "--fit", size, "--no-recompute"], ok=(0, 2))
    text = (out.stdout + out.stderr).strip()
    largest = re.search(r"largest batch that fits: (\d+)", text)
    if largest:
        return int(largest.group(1)), text
    if re.search(r"no batch size fits", text):
        return None, text
    raise SystemExit(f"bench.py: cannot read the fit of {model_file} on {devices} devices:\n"
                     f"{text}")


def train_ms(args, exe, devices, data, steps, metrics, mode):
    """ms per step of one `EXE train` run (one process, or mpirun -np devices with the Open
    MPI settings of MPI_MODES[mode]), or the run's error (a string) where it fails."""
    command = [exe, "train", "--data", data, "--steps", str(steps), "--threads", "1",
               "--metrics", metrics]
    if devices > 1:
        command = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(devices)
                   ] + command
    env = {k: v for k, v in os.environ.items() if k != "OMPI_MCA_mpi_yield_when_idle"}
    out = run(command, fail=False, env=dict(env, **MPI_ENVIRONMENT, **MPI_MODES[mode]))
    if isinstance(out, str):
        errors = [line for line in out.splitlines() if line.startswith("error")]
        return (errors or out.splitlines()[:1])[0]
    with open(metrics) as f:
        report = json.load(f)
    if report["steps"] != steps:
        raise SystemExit(f"bench.py: {exe} ran {report['steps']} steps, not {steps}")
    return 1000 * report["seconds"] / steps


def modes_of(args, devices):
    """The MPI settings a device count is timed under: one process has none."""
    return ["one process"] if devices == 1 else args.mpi_modes


def bench_model(args, model):
    model_file = os.path.join(ROOT, "examples", model + ".cairn")
    work = os.path.join(args.work, model)
    os.makedirs(work, exist_ok=True)
    entry = {"model": model, "batch": args.batch, "steps": args.steps_of(model),
             "devices": {}}
    for n in args.devices:
        entry["devices"][n] = {"plan": plan_devices(args, model_file, n, work),
                               "fit": {size: fit(args, model_file, n, size)[0]
                                       for size in args.fit_memory}}
    # Step time: one build per device count, then interleaved rounds.
    shape = write_tiny_dataset.image_shape(model_file) or (1, 28, 28)
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    write_tiny_dataset.write_split(data, "train", args.batch * 4, shape)
    exes = {}
    for n in args.devices:
        exes[n] = os.path.join(work, f"{model}-{n}")
        started = time.perf_counter()
        run([args.cairn, "build", model_file, "--batch", str(args.batch), "--devices", str(n),
             "-o", exes[n]])
        entry["devices"][n]["build_seconds"] = time.perf_counter() - started
        entry["devices"][n]["timing"] = {mode: {"rounds_ms": []} for mode in modes_of(args, n)}
    entry["load_before"] = os.getloadavg()
    for r in range(args.rounds):
        for n in args.devices:
            for mode, timing in entry["devices"][n]["timing"].items():
                if "error" in timing:
                    continue  # failed in an earlier round
                ms = train_ms(args, exes[n], n, data, entry["steps"],
                              os.path.join(work, f"metrics-{n}-{r}.json"), mode)
                if isinstance(ms, str):
                    print(f"bench/partition: {model} on {n} devices ({mode}) failed: {ms}",
                          file=sys.stderr, flush=True)
                    timing["error"] = ms
                else:
                    timing["rounds_ms"].append(ms)
    entry["load_after"] = os.getloadavg()
    for d in entry["devices"].values():
        for timing in d["timing"].values():
            if timing["rounds_ms"]:
                timing["ms_per_step"] = min(timing["rounds_ms"])
    return entry


def cairn_cut(report):
    """For every device but the last, the values it sends forward to the next in a plan's
    training step, without the micro-batch suffix."""
    with open(report) as f:
        devices = json.load(f)["devices"]
    return [sorted({re.sub(r"\.mb\d+$", "", t["buffer"]) for t in d.get("transfers", [])
                    if t["step"] == "train_step" and t["kind"] == "send"
                    and t["peer"] == k + 1})
            for k, d in enumerate(devices[:-1])]


def torch_peer(args, model, n, pipeline, report, work):
    """The PyTorch pipeline next to Cairn's `pipeline` on N devices: {"peak_bytes"} to be
    timed in the rounds, or {"skipped": why} / {"error"}."""
    if not args.python:
        return {"skipped": "no PyTorch 2.x with gloo (--python)"}
    split = torch_pipeline.SPLITS.get((model, n))
    if not split:
        return {"skipped": f"no PyTorch split of {model} on {n} devices is written "
                           "(torch_pipeline.SPLITS)"}
    cut = cairn_cut(report)
    if cut != [sorted(values) for values in split[1]]:
        return {"skipped": f"Cairn's devices send {cut} forward, the PyTorch split {split[1]}"}
    memory = torch_pipeline.run_pipeline(
        args.python, model, n, args.batch, args.micro_batches, pipeline, 2, 1, work,
        torch_env(), measure_memory=True)
    if "error" in memory:
        return memory
    return {"peak_bytes": memory["peak_bytes"], "torch": memory["torch"], "rounds_ms": []}


def torch_env():
    """The PyTorch ranks' environment: one thread each, as Cairn's ranks."""
    return dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive",
                GLOO_SOCKET_IFNAME="lo")


def bench_pipelines(args, model):
    """Per N > 1 and schedule: every device's arena, ms/step and wait shares, --micro-batches
    args.micro_batches, interleaved rounds under MPI mode yield; and the PyTorch peer's peak
    bytes and ms/step where there is one (torch_peer), in the same rounds."""
    model_file = os.path.join(ROOT, "examples", model + ".cairn")
    work = os.path.join(args.work, model + "-pipelines")
    os.makedirs(work, exist_ok=True)
    shape = write_tiny_dataset.image_shape(model_file) or (1, 28, 28)
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    write_tiny_dataset.write_split(data, "train", args.batch * 4, shape)
    m = args.micro_batches
    entry = {}
    for n in [n for n in args.devices if n > 1]:
        entry[n] = {}
        for pipeline in args.pipelines:
            flags = ["--batch", str(args.batch), "--devices", str(n), "--micro-batches", str(m),
                     "--pipeline", pipeline]
            report = os.path.join(work, f"plan-{n}-{pipeline}.json")
            run([args.cairn, "plan", model_file, "--memory-report", report] + flags)
            with open(report) as f:
                arenas = [d["arena_bytes"] for d in json.load(f)["devices"]]
            exe = os.path.join(work, f"{model}-{n}-{pipeline}")
            run([args.cairn, "build", model_file, "-o", exe] + flags)
            entry[n][pipeline] = {"arena_bytes": arenas, "exe": exe, "rounds_ms": [],
                                  "wait_shares": [],
                                  "ideal_bubble": (n - 1) / (m + n - 1),
                                  "torch": torch_peer(args, model, n, pipeline, report, work)}
    for r in range(args.rounds):
        for n, schedules in entry.items():
            for pipeline, e in schedules.items():
                if "error" in e:
                    continue
                metrics = os.path.join(work, f"metrics-{n}-{pipeline}-{r}.json")
                ms = train_ms(args, e["exe"], n, data, args.steps_of(model), metrics, "yield")
                if isinstance(ms, str):
                    e["error"] = ms
                    continue
                with open(metrics) as f:
                    report = json.load(f)
                e["rounds_ms"].append(ms)
                e["wait_shares"].append([w / report["seconds"]
                                         for w in report["devices_wait_seconds"]])
                peer = e["torch"]
                if "rounds_ms" in peer and "error" not in peer:
                    timed = torch_pipeline.run_pipeline(
                        args.python, model, n, args.batch, m, pipeline, 2,
                        args.steps_of(model), work, torch_env())
                    if "error" in timed:
                        peer["error"] = timed["error"]
                    else:
                        peer["rounds_ms"].append(timed["ms"])
    for schedules in entry.values():
        for e in schedules.values():
            e.pop("exe")
            if e["rounds_ms"]:
                best = min(range(len(e["rounds_ms"])), key=lambda i: e["rounds_ms"][i])
                e["ms_per_step"] = e["rounds_ms"][best]
                e["wait_share"] = e["wait_shares"][best]
            if e["torch"].get("rounds_ms"):
                e["torch"]["ms_per_step"] = min(e["torch"]["rounds_ms"])
    return {"micro_batches": m, "devices": entry}


# ----------------------------------------------------------------------------------- report

def mib(b):
    return f"{b / MiB:.2f}"


def one_ms(entry):
    """One device's fastest ms/step (None where it was not timed)."""
    timing = entry["devices"][min(entry["devices"])]["timing"]
    return min((t["ms_per_step"] for t in timing.values() if "ms_per_step" in t), default=None)


def summary(entry):
    """Derived numbers per device count: largest arena, ratios, transfers, step time (per MPI
    mode, against one device)."""
    devices = entry["devices"]
    one = devices[min(devices)]
    one_arena = max(p["arena_bytes"] for p in one["plan"])
    base = one_ms(entry)
    rows = {}
    for n, d in devices.items():
        arenas = [p["arena_bytes"] for p in d["plan"]]
        moved = [p["send_bytes"] + p["receive_bytes"] for p in d["plan"]]
        rows[n] = {
            "largest_arena_bytes": max(arenas),
            "largest_vs_one": max(arenas) / one_arena,
            "sum_arena_bytes": sum(arenas),
            "sum_vs_one": sum(arenas) / one_arena,
            "largest_transfer_bytes": max(moved),
            "ms_per_step": {mode: t.get("ms_per_step") for mode, t in d["timing"].items()},
            "time_vs_one": {mode: t["ms_per_step"] / base for mode, t in d["timing"].items()
                            if "ms_per_step" in t and base},
        }
    return rows


def settings(results):
    """What the runs in `results` were made with, read from them (so that `bench.py report`
    can write the report again from the JSON alone)."""
    entries = list(results["runs"].values())
    devices = sorted({n for e in entries for n in e["devices"]})
    timings = [t for e in entries for d in e["devices"].values() for t in d["timing"].items()]
    modes = [m for m in MPI_MODES if m != "one process" and any(k == m for k, _ in timings)]
    return argparse.Namespace(
        devices=devices, modes=modes or ["default"],
        batch=entries[0]["batch"] if entries else None,
        rounds=max((len(t["rounds_ms"]) for _, t in timings), default=0),
        fit_memory=list(entries[0]["devices"][devices[0]]["fit"]) if entries else [])


def report(results):
    args = settings(results)
    started = datetime.datetime.fromisoformat(results["date"])
    seconds = results["seconds"]
    oversubscribed = [n for n in args.devices if n > results["cores"]]
    lines = [
        "# A model split across devices: memory, transfers, step time, largest batch",
        "",
        f"- command: `{results['command']}`",
        f"- date: {started:%Y-%m-%d %H:%M} UTC, {seconds:.0f} s",
        f"- commit: {results['commit']}",
        f"- machine: {results['cpu']}, {results['cores']} cores; Open MPI (`mpirun --oversubscribe "
        f"--bind-to none`), one process per device, `--threads 1` per process, "
        "OMP_WAIT_POLICY=passive",
        f"- batch {args.batch} for every model; steps per timed run: "
        + ", ".join(f"{e['model']} {e['steps']}" for e in results["runs"].values())
        + f"; {args.rounds} interleaved rounds (each device count and MPI mode in turn), "
        "fastest round",
        "- arena: the executable's arena per device (`cairn plan --devices N --memory-report`, "
        "training step, forward and eval loss sharing it); 1 device is `--devices 1` (the "
        "placed model on one device); largest / 1: the largest device's arena against the "
        "one-device arena; sum / 1: all devices' arenas together against it.",
        "- transfers: bytes one training step sends plus receives per device (the report's "
        "train_step transfers); the largest device's, and each device's in the detail table.",
        "- ms/step: rank 0's `--metrics` seconds (the training loop, first step included) / "
        "steps; 1 device runs as one process without mpirun; vs 1: against one device's "
        "fastest round. MPI modes: default is Open MPI's own waiting (a rank blocked in a "
        "receive polls; Open MPI turns on yielding by itself only where it knows the node is "
        "oversubscribed); yield sets OMPI_MCA_mpi_yield_when_idle=1 (the polling rank calls "
        "sched_yield, giving its core to a rank or process that has work).",
        f"- fit: `cairn plan --devices N --fit SIZE --no-recompute`, the largest batch whose "
        "every device's arena fits SIZE (each device has SIZE); none: not even batch 1.",
    ]
    if oversubscribed:
        lines.append(
            f"- **{', '.join(map(str, oversubscribed))} devices are oversubscribed on "
            f"{results['cores']} cores**: their ranks share cores, so their step times measure "
            "the schedule (stages one after another, transfers, ranks waiting), not a "
            "speedup. Without micro-batches the stages of a step run one after another "
            "anyway: the best a split can reach is about one device's time.")
    modes = args.modes
    lines += ["", "## Summary", "",
              "| model | devices | largest arena MiB | largest / 1 | sum / 1 | persistent MiB "
              "(per device) | transfers / step (largest device) | "
              + " | ".join(f"ms/step ({m}) | vs 1" for m in modes) + " | "
              + " | ".join(f"fit {s}: batch | vs 1" for s in args.fit_memory) + " |",
              "|---|---:|---:|---:|---:|---|---:|" + "---:|---:|" * len(modes)
              + "---:|---:|" * len(args.fit_memory)]
    for entry in results["runs"].values():
        rows = summary(entry)
        one = entry["devices"][min(entry["devices"])]
        for n, d in entry["devices"].items():
            s = rows[n]
            persistent = ", ".join(mib(p["persistent_bytes"]) for p in d["plan"])
            times = []
            for mode in modes:
                # One process has no MPI mode: its time stands in every mode's column.
                key = mode if mode in d["timing"] else next(iter(d["timing"]))
                ms = s["ms_per_step"][key]
                times.append(f"{ms:.1f}" if ms else "failed")
                times.append(f"{s['time_vs_one'][key]:.2f}x" if key in s["time_vs_one"]
                             else "")
            fits = []
            for size in args.fit_memory:
                batch, base = d["fit"][size], one["fit"][size]
                fits.append(str(batch) if batch else "none")
                fits.append(f"{batch / base:.2f}x" if batch and base else "")
            lines.append(
                f"| {entry['model']} | {n} | {mib(s['largest_arena_bytes'])} | "
                f"{s['largest_vs_one']:.2f}x | {s['sum_vs_one']:.2f}x | {persistent} | "
                f"{mib(s['largest_transfer_bytes'])} MiB | " + " | ".join(times + fits) + " |")
    lines += ["", "## Per device", "",
              "| model | devices | device | arena MiB | persistent MiB | sends | receives | "
              "sent + received MiB / step | values it sends |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for entry in results["runs"].values():
        for n, d in entry["devices"].items():
            for p in d["plan"]:
                lines.append(
                    f"| {entry['model']} | {n} | {p['device']} | {mib(p['arena_bytes'])} | "
                    f"{mib(p['persistent_bytes'])} | {p['sends']} | {p['receives']} | "
                    f"{mib(p['send_bytes'] + p['receive_bytes'])} | "
                    f"{', '.join(p['crossing'])} |")
    lines += ["", "## Step time, every round", "",
              "| model | devices | MPI | rounds ms/step | fastest | build s | load average "
              "before, after (1 min) |", "|---|---:|---|---|---:|---:|---|"]
    for entry in results["runs"].values():
        for n, d in entry["devices"].items():
            for mode, timing in d["timing"].items():
                rounds = ", ".join(f"{ms:.1f}" for ms in timing["rounds_ms"])
                if "error" in timing:
                    rounds += ("; then " if rounds else "") + f"failed: `{timing['error']}`"
                fastest = f"{timing['ms_per_step']:.1f}" if "ms_per_step" in timing else ""
                lines.append(
                    f"| {entry['model']} | {n} | {mode} | {rounds} | {fastest} | "
                    f"{d['build_seconds']:.1f} | {entry['load_before'][0]:.2f}, "
                    f"{entry['load_after'][0]:.2f} |")
    failures = [(e["model"], n, mode, t["error"]) for e in results["runs"].values()
                for n, d in e["devices"].items() for mode, t in d["timing"].items()
                if "error" in t]
    if failures:
        lines += ["", "## Failures", ""] + [
            f"- {model} on {n} devices ({mode}): `{error}`"
            for model, n, mode, error in failures]
    pipelined = [(e["model"], e["pipelines"]) for e in results["runs"].values()
                 if e.get("pipelines")]
    if pipelined:
        lines += ["", "## Micro-batches: GPipe against 1F1B", "",
                  "`--devices N --micro-batches M --pipeline gpipe|1f1b` at the same batch: "
                  "each device's arena (1F1B's stage s holds at most N - s micro-batches, "
                  "GPipe's all M), the fastest round's ms/step (MPI mode yield) and each "
                  "device's share of the training loop spent waiting (sends, receives, the "
                  "step's loss): the measured bubble and copies, against the ideal bubble "
                  "(N - 1) / (M + N - 1) of equal stages. Stages are not equal (the split "
                  "balances modelled time), and ranks beyond the cores share them.", "",
                  "| model | devices | M | schedule | arena MiB per device | ms/step | "
                  "waiting, per device | ideal bubble |", "|---|---:|---:|---|---|---:|---|---:|"]
        for model, p in pipelined:
            for n, schedules in p["devices"].items():
                for pipeline, e in schedules.items():
                    waits = ", ".join(f"{w:.0%}" for w in e.get("wait_share", []))
                    ms = f"{e['ms_per_step']:.1f}" if "ms_per_step" in e else \
                        f"failed: `{e.get('error')}`"
                    lines.append(
                        f"| {model} | {n} | {p['micro_batches']} | {pipeline} | "
                        f"{', '.join(mib(a) for a in e['arena_bytes'])} | {ms} | {waits} | "
                        f"{e['ideal_bubble']:.0%} |")
    peers = [(model, p["micro_batches"], n, pipeline, e) for model, p in pipelined
             for n, schedules in p["devices"].items() for pipeline, e in schedules.items()
             if e.get("torch")]
    if peers:
        lines += ["", "## PyTorch's torch.distributed.pipelining, the same split", "",
                  "PyTorch 2.x's pipelining over gloo (bench/partition/torch_pipeline.py), one "
                  "process per stage at one thread, the twin (test/reference/pytorch_models.py) "
                  "cut where Cairn's `--devices N` cuts it (checked against the values each of "
                  "Cairn's devices sends forward), the same schedule and micro-batches. "
                  "Memory: Cairn's arena per device (everything the process computes with) "
                  "against PyTorch's peak bytes live in the CPU allocator during one step on "
                  "that rank (as "
                  "bench/memory: parameters, gradients, optimizer state, inputs, activations "
                  "and receive buffers; gloo's own buffers excluded); largest: PyTorch's "
                  "largest rank over Cairn's largest device. Time: the fastest round of each, "
                  "in the same interleaved rounds; PyTorch / Cairn above 1 means Cairn is "
                  "faster.", "",
                  "| model | devices | M | schedule | Cairn arena MiB per device | "
                  "PyTorch peak MiB per device | largest, PyTorch / Cairn | Cairn ms/step | "
                  "PyTorch ms/step | PyTorch / Cairn |",
                  "|---|---:|---:|---|---|---|---:|---:|---:|---:|"]
        for model, m, n, pipeline, e in peers:
            t = e["torch"]
            row = f"| {model} | {n} | {m} | {pipeline} | " \
                f"{', '.join(mib(a) for a in e['arena_bytes'])} | "
            if "peak_bytes" not in t or "ms_per_step" not in t or "ms_per_step" not in e:
                why = t.get("skipped") or t.get("error") or e.get("error") or "not timed"
                lines.append(row + f"not measured: {why} | | | | |")
                continue
            lines.append(
                row + f"{', '.join(mib(b) for b in t['peak_bytes'])} | "
                f"{max(t['peak_bytes']) / max(e['arena_bytes']):.2f}x | "
                f"{e['ms_per_step']:.1f} | {t['ms_per_step']:.1f} | "
                f"{t['ms_per_step'] / e['ms_per_step']:.2f} |")
        lines += ["", TORCH_NOTE]
    return "\n".join(lines)


TORCH_NOTE = (
    "Where there is no PyTorch row: Cairn cuts inside layers where the stages balance "
    "(resnet18 inside a BasicBlock), and torch.distributed.pipelining needs each cut written "
    "into a copy of the twin's forward (torch_pipeline.SPLITS has mlp, cnn and the "
    "transformer on 2 and 4 devices; the transformer cut at residual sums before a layer's "
    "norm2, the mlp's and cnn's four stages with a relu, or only the loss, as a stage of its "
    "own). Each is one function there; bench.py checks it against Cairn's cuts before it "
    "runs.")


def main_run(args):
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.perf_counter()
    steps = dict(STEPS)
    for item in args.steps:
        model, _, count = item.partition("=")
        steps[model] = int(count)
    args.steps_of = lambda model: steps.get(model, DEFAULT_STEPS)
    if any(n > 1 for n in args.devices) and not shutil.which("mpirun"):
        raise SystemExit("bench.py: no mpirun (Debian package openmpi-bin)")
    args.work = tempfile.mkdtemp(prefix="cairn-partition-")
    head = commit()
    results = {"commit": head, "cpu": cpu_name(), "cores": os.cpu_count(),
               "command": args.command, "date": str(started), "runs": {}}
    name = f"partition-{started:%Y-%m-%d}-{head.split()[0]}"
    out = args.out or os.path.join(ROOT, "bench", "results", name + ".md")
    for model in args.models:
        print(f"bench/partition: {model} batch {args.batch}", file=sys.stderr, flush=True)
        results["runs"][model] = bench_model(args, model)
        if model in args.pipeline_models and args.pipelines:
            results["runs"][model]["pipelines"] = bench_pipelines(args, model)
        results["seconds"] = time.perf_counter() - clock
        for entry in results["runs"].values():
            entry["summary"] = summary(entry)
        with open(os.path.splitext(out)[0] + ".json", "w") as f:
            json.dump(results, f, indent=1)
        with open(out, "w") as f:
            f.write(report(results))
    if not args.keep:
        shutil.rmtree(args.work)
    print(f"bench/partition: wrote {out} ({time.perf_counter() - clock:.0f} s)",
          file=sys.stderr)


def main_report(args):
    with open(args.json) as f:
        results = json.load(f)
    for entry in results["runs"].values():  # JSON's keys are strings
        entry["devices"] = {int(n): d for n, d in entry["devices"].items()}
        if entry.get("pipelines"):
            entry["pipelines"]["devices"] = {int(n): d for n, d in
                                             entry["pipelines"]["devices"].items()}
    out = os.path.splitext(args.json)[0] + ".md"
    with open(out, "w") as f:
        f.write(report(results))
    print(f"bench/partition: wrote {out}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("--models", nargs="+", default=["mlp", "cnn", "transformer", "resnet18"])
    r.add_argument("--batch", type=int, default=64)
    r.add_argument("--devices", nargs="+", type=int, default=[1, 2, 4])
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--steps", nargs="+", default=[], metavar="MODEL=STEPS",
                   help=f"steps per timed run (default {STEPS}, else {DEFAULT_STEPS})")
    r.add_argument("--mpi-modes", nargs="+", default=["default", "yield"],
                   choices=["default", "yield"],
                   help="how ranks wait for messages, each timed (see MPI_MODES)")
    r.add_argument("--fit-memory", nargs="+", default=["64MiB"],
                   help="the memory of each device for the fit (cairn --fit SIZE)")
    r.add_argument("--micro-batches", type=int, default=4,
                   help="micro-batches of the pipeline runs (must divide --batch)")
    r.add_argument("--pipelines", nargs="*", default=["gpipe", "1f1b"],
                   choices=["gpipe", "1f1b"], help="the schedules compared (none: skip)")
    r.add_argument("--pipeline-models", nargs="+", default=["mlp", "cnn", "transformer"],
                   help="the models whose pipelines are measured")
    r.add_argument("--python", help="a Python with PyTorch 2.x and gloo for the PyTorch "
                   "pipelining peer (none: the report says it was not measured)")
    r.add_argument("--cairn", default=os.path.join(ROOT, "build", "bin", "cairn"))
    r.add_argument("--out")
    r.add_argument("--keep", action="store_true", help="keep the executables and reports")
    r.add_argument("--command", default="bench/partition/run.sh")
    w = sub.add_parser("report", help="write FILE.md again from FILE.json")
    w.add_argument("json")
    args = parser.parse_args()
    if args.what == "report":
        main_report(args)
        return
    args.devices = sorted(set(args.devices))
    main_run(args)


if __name__ == "__main__":
    main()
