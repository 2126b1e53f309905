"""Data-parallel replicas train to the bits of one process running them as micro-batches.

    check_replicas.py --cairn CAIRN --work DIR [--batch N] [--steps N] [--replicas R,...]
                      [--bucket SIZE] [--max-relative X] [--precision f32|bf16|f16]
                      [--loss-scale dynamic:S]
                      MODEL.cairn[:R,...]...

For each model and each R (the model's list, else --replicas): builds it with `--replicas R`
(and --bucket), with `--micro-batches R` (one process: replica r's examples are micro-batch r)
and plain (one process, the whole batch).
The replicated build's memory report must hold its buckets' workspaces (`all_reduce.bucket<i>`
buffers, (R - 1)/R of the gradients' bytes in all: the sums run in place). Writes initial
weights once, then trains --steps steps from them on a tiny data set shaped like the model's
image input (write_tiny_dataset.py) three ways, each ending with an evaluation on the test
split: micro-batches, `mpirun -np R` replicas (and again with --poison), plain. The replicas' saved weights and optimizer state must equal
the micro-batches' byte for byte, and so must the final loss (the replicas' mean loss is
summed in rank order, in float32, as the micro-batches' is) and, in f16, the steps the loss
scaler skipped and its scale (found_inf reads the summed gradients, the same on every replica). Batch norm's running statistics
are the exception: each replica updates them from its own examples and rank 0's are kept (as
PyTorch DDP's broadcast_buffers), where the micro-batches update them once per micro-batch; the
weights still match, batch norm normalising each replica's (micro-batch's) examples by their own
statistics. Against the plain build (one batch, another order of summation) every weight of a
model without batch norm or dropout (whose masks are drawn per micro-batch) must agree to
--max-relative (the largest difference over the largest magnitude, per tensor); the
check prints how close it is.

Models with batch norm (and no dropout) are also built with --sync-batchnorm
(check_sync_batchnorm): batch norm on the whole batch's statistics, within --max-relative of one
process on the whole batch, running statistics included, with --poison too.

Then the launch and the failures, on the first model: --help says how to launch it, one process
or R + 1 are refused with that; a data directory that does not exist (every rank exits 1, one
message), and a rank killed with SIGKILL in the middle of training (mpirun exits
non-zero within a minute, no checkpoint is written). Exits 1 naming the first difference; 77
without mpirun.
"""

import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_partition_bit_identical import MPI_ENVIRONMENT, use_own_mpi_session_dir  # noqa: E402
from check_plan_bit_identical import read_safetensors, run, write_tiny_data  # noqa: E402

RUNNING_STATISTICS = ("running_mean", "running_var", "num_batches_tracked")
OPTIMIZER_STATE = ("momentum_buffer", "exp_avg", "exp_avg_sq")


def floats(raw):
    return struct.unpack(f"<{len(raw) // 4}f", raw)


def max_relative(reference, other, running_statistics=False):
    """The largest of max|a - b| / max|a| over the weights (float32 params), and over batch
    norm's running mean and variance when asked: optimizer state holds the running moments of
    gradients that are rounding noise (a bias in front of softmax's or batch norm's
    invariance), whose digits differ with the order of summation."""
    worst, where = 0.0, None
    skipped = OPTIMIZER_STATE + (() if running_statistics else RUNNING_STATISTICS)
    for name, (dtype, _, raw) in reference.items():
        if dtype != "F32" or name.endswith(skipped):
            continue
        a, b = floats(raw), floats(other[name][2])
        scale = max((abs(x) for x in a), default=0.0)
        if scale == 0:
            continue
        difference = max(abs(x - y) for x, y in zip(a, b)) / scale
        if difference > worst:
            worst, where = difference, name
    return worst, where


def check_buckets(model, report_file, replicas):
    with open(report_file) as f:
        plans = json.load(f)["devices"]
    buffers = [b for plan in plans for b in plan.get("buffers", [])]
    buckets = [b for b in buffers if b["name"].startswith("all_reduce.bucket")]
    grads = [b for b in buffers if b["name"].startswith("grad.")]
    if not buckets:
        sys.exit(f"{model}: the --replicas {replicas} plan shows no all_reduce.bucket buffer")
    # Each bucket's workspace: the other replicas' copies of this one's chunk, (R - 1)/R of
    # its gradients (chunks rounded up).
    workspace, grad_bytes = sum(b["bytes"] for b in buckets), sum(b["bytes"] for b in grads)
    least = (replicas - 1) * grad_bytes // replicas
    if not least <= workspace <= least + 4 * (replicas - 1) * len(buckets):
        sys.exit(f"{model}: the buckets' workspaces take {workspace} bytes, not (R - 1)/R of "
                 f"the gradients' {grad_bytes}")
    return len(buckets)


def check_launch(exe, replicas):
    """--help says how to launch it; a launch with another number of processes is refused."""
    text = run([exe, "--help"])
    if f"trains as {replicas} data-parallel replicas" not in text:
        sys.exit(f"--help does not say the model trains as {replicas} replicas:\n{text}")
    expected = f"as {replicas} replicas, one process each"
    for count in (1, replicas + 1):
        command = [exe, "train"] if count == 1 else [
            "mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(count), exe, "train"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode == 0 or expected not in result.stderr or \
                f"mpirun -np {replicas}" not in result.stderr:
            sys.exit(f"{count} processes of a {replicas}-replica executable: expected exit 1 and "
                     f"'{expected}', got {result.returncode}:\n{result.stderr}")


def check_failures(exe, data, work, replicas):
    check_launch(exe, replicas)
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(replicas)]
    # Missing data: agreed on, one message, every rank exits 1.
    result = subprocess.run(mpirun + [exe, "train", "--data", os.path.join(work, "nowhere"),
                                      "--steps", "2", "--threads", "1"],
                            capture_output=True, text=True, timeout=120)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    if result.returncode == 0 or len(errors) != 1 or "nowhere" not in errors[0]:
        sys.exit(f"missing data: expected a non-zero exit and one error naming the directory, "
                 f"got {result.returncode}:\n{result.stdout}{result.stderr}")
    # A rank killed mid-training: every rank ends, nothing is saved.
    checkpoint = os.path.join(work, "killed.safetensors")
    process = subprocess.Popen(
        mpirun + [exe, "train", "--data", data, "--steps", "1000000", "--threads", "1",
                  "--save", checkpoint, "--log-every", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    ranks = []
    deadline = time.time() + 60
    while len(ranks) < replicas and time.time() < deadline:
        time.sleep(0.5)
        found = subprocess.run(["pgrep", "-f", "-x", f"{exe} train .*--save {checkpoint}.*"],
                               capture_output=True, text=True).stdout.split()
        ranks = sorted(int(pid) for pid in found)
    if len(ranks) < replicas:
        os.killpg(process.pid, signal.SIGKILL)
        sys.exit(f"killed rank: found {len(ranks)} of {replicas} rank processes")
    time.sleep(2)  # into the training loop
    os.kill(ranks[-1], signal.SIGKILL)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        sys.exit("killed rank: the other ranks were still running a minute after it died")
    if process.returncode == 0:
        sys.exit(f"killed rank: mpirun exited 0:\n{output}")
    if os.path.exists(checkpoint):
        sys.exit("killed rank: a checkpoint was written")
    return process.returncode


def check_sync_batchnorm(args, model, model_file, replicas, work, data, init, plain,
                         per_replica):
    """--sync-batchnorm: batch norm on the whole batch's statistics, so the replicas train the
    model one process trains on the whole batch: weights and running statistics within
    --max-relative of it (the sums of the statistics and of the gradients run in another
    order), num_batches_tracked equal, with --poison too; each replica's own statistics (the
    default) are another model, further away."""
    exe = os.path.join(work, "replicas-sync")
    run([args.cairn, "build", model_file, "--batch", str(args.batch), "--precision",
         args.precision, "--replicas", str(replicas), "--bucket", args.bucket,
         "--sync-batchnorm", "-o", exe])
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(replicas)]
    if "statistics of the whole batch (--sync-batchnorm)" not in run([exe, "--help"]):
        sys.exit(f"{model}: --sync-batchnorm: --help does not say so")
    got = {}
    for name in ("sync", "sync-poison"):
        out = os.path.join(work, f"{name}.safetensors")
        metrics = os.path.join(work, f"{name}.json")
        run(mpirun + [exe, "train", "--data", data, "--steps", str(args.steps), "--seed", "5",
                      "--load", init, "--save", out, "--metrics", metrics, "--threads", "1"]
            + (["--loss-scale", args.loss_scale] if args.loss_scale else [])
            + (["--poison"] if name.endswith("poison") else []))
        got[name] = read_safetensors(out)
        with open(metrics) as f:
            if json.load(f).get("sync_batchnorm") is not True:
                sys.exit(f"{model}: --sync-batchnorm: the metrics do not say sync_batchnorm")
    if got["sync"] != got["sync-poison"]:
        sys.exit(f"{model}: --sync-batchnorm: --poison changed the results")
    synced = got["sync"]
    for name in plain:
        if name.endswith("num_batches_tracked") and synced[name] != plain[name]:
            sys.exit(f"{model}: --sync-batchnorm: '{name}' differs from one process's")
    closeness, where = max_relative(plain, synced, running_statistics=True)
    if closeness > args.max_relative:
        sys.exit(f"{model}: {replicas} replicas with --sync-batchnorm differ from one process on "
                 f"the whole batch by {closeness:.3g} relative in '{where}', over "
                 f"{args.max_relative:g}")
    apart, _ = max_relative(plain, per_replica, running_statistics=True)
    if apart <= closeness:
        sys.exit(f"{model}: per-replica batch norm is as close to one process ({apart:.3g}) as "
                 f"--sync-batchnorm ({closeness:.3g}): the statistics were not shared")
    print(f"{model}: {replicas} replicas with --sync-batchnorm train {args.steps} steps to "
          f"within {closeness:.3g} relative of one process on the whole batch, running "
          f"statistics included, with --poison too (each replica's own statistics: {apart:.3g})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cairn", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--batch", type=int, default=24)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--replicas", default="2")
    parser.add_argument("--bucket", default="64KiB")
    parser.add_argument("--max-relative", type=float, default=1e-6)
    parser.add_argument("--precision", choices=["f32", "bf16", "f16"], default="f32")
    parser.add_argument("--loss-scale",
                        help="f16: the executables' --loss-scale (dynamic:S from a scale S that "
                             "overflows, so that the replicas and the micro-batches must skip "
                             "the same steps; at least one is required)")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    if not shutil.which("mpirun"):
        print("skipped: no mpirun (Debian package openmpi-bin)")
        sys.exit(77)
    os.environ.update(MPI_ENVIRONMENT)
    os.makedirs(args.work, exist_ok=True)
    use_own_mpi_session_dir(args.work)
    failures_checked = False
    for spec in args.models:
        model_file, _, counts = spec.partition(":")
        model = os.path.splitext(os.path.basename(model_file))[0]
        for replicas in (int(r) for r in (counts or args.replicas).split(",")):
            work = os.path.join(args.work, f"{model}-{args.precision}-r{replicas}")
            os.makedirs(work, exist_ok=True)
            exe = {name: os.path.join(work, name) for name in ("replicas", "micro", "plain")}
            report = os.path.join(work, "replicas-plan.json")
            batch = ["--batch", str(args.batch), "--precision", args.precision]
            run([args.cairn, "build", model_file, *batch, "--replicas", str(replicas),
                 "--bucket", args.bucket, "-o", exe["replicas"], "--memory-report", report])
            run([args.cairn, "build", model_file, *batch, "--micro-batches", str(replicas),
                 "-o", exe["micro"]])
            run([args.cairn, "build", model_file, *batch, "-o", exe["plain"]])
            buckets = check_buckets(model, report, replicas)
            with open(model_file) as f:  # comments aside
                dropout = any("dropout" in line.split("#")[0].lower() for line in f)
            data = write_tiny_data(model, model_file, work)
            init = os.path.join(work, "init.safetensors")
            run([exe["plain"], "init", "--seed", "3", "--save", init])
            mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(replicas)]
            results = {}
            for name, command in (("micro", [exe["micro"]]),
                                  ("replicas", mpirun + [exe["replicas"]]),
                                  ("replicas-poison", mpirun + [exe["replicas"]]),
                                  ("plain", [exe["plain"]])):
                out = os.path.join(work, f"{name}.safetensors")
                metrics = os.path.join(work, f"{name}.json")
                flags = ["train", "--data", data, "--steps", str(args.steps), "--seed", "5",
                         "--load", init, "--save", out, "--metrics", metrics, "--threads", "1"]
                if args.loss_scale:
                    flags += ["--loss-scale", args.loss_scale]
                run(command + flags + (["--poison"] if name.endswith("poison") else []))
                with open(metrics) as f:
                    results[name] = (read_safetensors(out), json.load(f))
            micro, micro_metrics = results["micro"]
            for name in ("replicas", "replicas-poison"):
                got, metrics = results[name]
                if got.keys() != micro.keys():
                    sys.exit(f"{model}: {name}: tensor names differ: "
                             f"{sorted(got.keys() ^ micro.keys())}")
                for tensor in sorted(micro):
                    if tensor.endswith(RUNNING_STATISTICS):
                        continue
                    if got[tensor] != micro[tensor]:
                        sys.exit(f"{model}: {name}: tensor '{tensor}' differs from "
                                 f"--micro-batches {replicas} on one process")
                if metrics.get("skipped_steps") != micro_metrics.get("skipped_steps") or \
                        metrics.get("loss_scale") != micro_metrics.get("loss_scale"):
                    sys.exit(f"{model}: {name}: f16's scaler skipped "
                             f"{metrics.get('skipped_steps')} steps to the scale "
                             f"{metrics.get('loss_scale')}, the micro-batches "
                             f"{micro_metrics.get('skipped_steps')} to "
                             f"{micro_metrics.get('loss_scale')}")
                if args.loss_scale and not metrics.get("skipped_steps"):
                    sys.exit(f"{model}: {name}: --loss-scale {args.loss_scale} skipped no step")
                if metrics["final_loss"] != micro_metrics["final_loss"]:
                    sys.exit(f"{model}: {name}: final loss {metrics['final_loss']!r} differs "
                             f"from the micro-batches' {micro_metrics['final_loss']!r}")
                if metrics.get("replicas") != replicas or metrics.get("sync_batchnorm") is not False:
                    sys.exit(f"{model}: {name}: metrics say replicas "
                             f"{metrics.get('replicas')!r}, sync_batchnorm "
                             f"{metrics.get('sync_batchnorm')!r}")
                waits = metrics.get("devices_wait_seconds")
                if not (isinstance(waits, list) and len(waits) == replicas):
                    sys.exit(f"{model}: {name}: devices_wait_seconds {waits!r} is not one "
                             f"figure per replica")
            plain, plain_metrics = results["plain"]
            if any(name.endswith(RUNNING_STATISTICS) for name in plain):
                # Each replica normalises by its own examples' statistics: another model
                # than one batch's, as DDP without SyncBatchNorm.
                versus = "batch norm on each replica's statistics, not one batch's"
                if not dropout and not args.loss_scale:
                    check_sync_batchnorm(args, model, model_file, replicas, work, data, init,
                                         plain, results["replicas"][0])
            elif dropout:
                versus = "dropout masks drawn per replica, not one batch's"
            elif plain_metrics.get("skipped_steps") != micro_metrics.get("skipped_steps"):
                # A smaller batch's f16 weight gradients overflow at other scales.
                versus = (f"one process on the whole batch skipped "
                          f"{plain_metrics.get('skipped_steps')} steps, not compared")
            else:
                closeness, where = max_relative(plain, results["replicas"][0])
                if closeness > args.max_relative:
                    sys.exit(f"{model}: {replicas} replicas differ from one process by "
                             f"{closeness:.3g} relative in '{where}', over "
                             f"{args.max_relative:g}")
                versus = f"within {closeness:.3g} relative of one process on the whole batch"
            skipped = (f", {micro_metrics['skipped_steps']} steps skipped by f16's scaler"
                       if args.loss_scale else "")
            print(f"{model}: {replicas} replicas ({buckets} buckets of --bucket {args.bucket}) "
                  f"train {args.steps} steps to the bits of --micro-batches {replicas} on one "
                  f"process, with --poison too (running statistics aside){skipped}; {versus} "
                  f"(final loss {micro_metrics['final_loss']!r})")
            if not failures_checked:
                code = check_failures(exe["replicas"], data, work, replicas)
                print(f"{model}: --help and a wrong number of processes say to launch "
                      f"`mpirun -np {replicas}`; missing data ends every replica with one message; "
                      f"a replica "
                      f"killed mid-training ends the run (exit {code}) with no checkpoint")
                failures_checked = True


if __name__ == "__main__":
    main()
