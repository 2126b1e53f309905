"""A model split across devices trains to the same bits as on one device.

    check_partition_bit_identical.py --cairn CAIRN --work DIR [--batch N] [--steps N]
                                     [--micro-batches M] [--pipeline 1f1b|gpipe]
                                     [--precision f32|bf16|f16] [--loss-scale S]
                                     MODEL.cairn[:DEVICES[:BUDGET]]...

For each model: builds it for one device (`--devices 1`, which ignores `on device` regions) and
split across DEVICES (default 2) processes, by `cairn build --devices N` for a model without
`on device` regions, by its regions otherwise (then DEVICES is what they use); with BUDGET (a
fraction), under `--memory-budget` that fraction of the plain split's largest arena, which
every device's arena must then fit. Checks the split's memory report: one plan per device, each
arena smaller than the one-device arena (under GPipe with micro-batches only above 0: a GPipe
stage holds every micro-batch in flight where one device accumulates them one at a time, so a
stage may need more; tools/micro-batches.test checks the stages' memory). Then writes initial weights once with the one-device
executable and trains --steps steps from them on a tiny data set shaped like the model's image
input (write_tiny_dataset.py), one device, then `mpirun -np DEVICES` (and again with --poison),
each ending with an evaluation on the test split. The saved weights, running statistics and
optimizer state (gathered from every device into one file) must equal the one-device run's byte
for byte, and so must the final loss, test loss and test accuracy. Exits 1 naming the first
difference; 77 without mpirun. With --micro-batches M both builds run each batch as M
micro-batches (gradient accumulation on one device, a pipeline across devices: --pipeline's
schedule, 1F1B by default). With --precision both builds take it; f16's loss scaler (the
executables' --loss-scale S) must then skip the same steps to the same scale on every run, and
skip at least one: the overflow check, like gradient clipping, sums over the devices.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_plan_bit_identical import compare, run, write_tiny_data  # noqa: E402

# Open MPI as root (CI and containers) and without the single-copy mechanism that containers'
# ptrace rules forbid; ranks on fewer cores take one thread each and neither OpenMP nor MPI
# spins while waiting (Open MPI's polling made a 2-rank mlp step 15x slower, bench/partition).
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMP_WAIT_POLICY": "passive",
}


def use_own_mpi_session_dir(work):
    """Gives this script's mpirun jobs a session directory of their own under `work`: Open MPI 4
    keeps every job's under /tmp/ompi.HOST.UID, which the last job to end removes, so a job of
    another test starting then fails in orte_init ("A call to mkdir was unable to create the
    desired directory", open-mpi/ompi#8510); ctest runs two tests at a time."""
    base = os.path.join(os.path.abspath(work), "ompi-session")
    os.makedirs(base, exist_ok=True)
    os.environ["OMPI_MCA_orte_tmpdir_base"] = base


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cairn", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--micro-batches", type=int, default=1)
    parser.add_argument("--pipeline", choices=["1f1b", "gpipe"], default="1f1b")
    parser.add_argument("--precision", choices=["f32", "bf16", "f16"], default="f32")
    parser.add_argument("--loss-scale")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    if not shutil.which("mpirun"):
        print("skipped: no mpirun (Debian package openmpi-bin)")
        sys.exit(77)
    os.environ.update(MPI_ENVIRONMENT)
    os.makedirs(args.work, exist_ok=True)
    use_own_mpi_session_dir(args.work)
    for spec in args.models:
        model_file, _, rest = spec.partition(":")
        count, _, fraction = rest.partition(":")
        devices = int(count or 2)
        with open(model_file) as f:
            placed = "on device" in f.read()
        model = os.path.splitext(os.path.basename(model_file))[0]
        work = os.path.join(args.work, f"{model}-{devices}{'-' + fraction if fraction else ''}"
                                       f"-mb{args.micro_batches}-{args.pipeline}-{args.precision}")
        os.makedirs(work, exist_ok=True)
        one, split = os.path.join(work, "one"), os.path.join(work, "split")
        one_report, report = os.path.join(work, "one.json"), os.path.join(work, "split.json")
        batch = ["--batch", str(args.batch), "--micro-batches", str(args.micro_batches),
                 "--pipeline", args.pipeline, "--precision", args.precision]
        run([args.cairn, "build", model_file, *batch, "-o", one, "--memory-report", one_report,
             "--devices", "1"])
        placement = [] if placed else ["--devices", str(devices)]
        run([args.cairn, "build", model_file, *batch, "-o", split, "--memory-report", report,
             *placement])
        budget = None
        if fraction:
            with open(report) as f:
                plain = max(plan["arena_bytes"] for plan in json.load(f)["devices"])
            budget = int(float(fraction) * plain)
            run([args.cairn, "build", model_file, *batch, "-o", split, "--memory-report", report,
                 *placement, "--memory-budget", str(budget)])
        with open(one_report) as f:
            one_arena = json.load(f)["devices"][0]["arena_bytes"]
        with open(report) as f:
            plans = json.load(f)["devices"]
        if [plan["device"] for plan in plans] != list(range(devices)):
            sys.exit(f"{model}: the report lists devices {[p['device'] for p in plans]}, "
                     f"expected 0 to {devices - 1}")
        arenas = [plan["arena_bytes"] for plan in plans]
        bounded = args.micro_batches == 1 or args.pipeline != "gpipe"
        if not all(0 < arena and (arena < one_arena or not bounded) for arena in arenas):
            sys.exit(f"{model}: device arenas {arenas} are not all below the one-device "
                     f"arena {one_arena}")
        if budget is not None and max(arenas) > budget:
            sys.exit(f"{model}: device arenas {arenas} do not all fit --memory-budget {budget}")
        data = write_tiny_data(model, model_file, work)
        init = os.path.join(work, "init.safetensors")
        run([one, "init", "--seed", "3", "--save", init])
        mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(devices)]
        results = {}
        for name, command in (("one", [one]), ("split", mpirun + [split]),
                              ("split-poison", mpirun + [split])):
            out = os.path.join(work, f"{name}.safetensors")
            metrics = os.path.join(work, f"{name}.json")
            flags = ["train", "--data", data, "--steps", str(args.steps), "--seed", "5",
                     "--load", init, "--save", out, "--metrics", metrics, "--threads", "1"]
            if args.loss_scale:
                flags += ["--loss-scale", args.loss_scale]
            run(command + flags + (["--poison"] if name.endswith("poison") else []))
            with open(metrics) as f:
                results[name] = (out, json.load(f))
        reference_out, reference = results["one"]
        for name in ("split", "split-poison"):
            out, metrics = results[name]
            compare(model, name, reference_out, out, "one device")
            waits = metrics.get("devices_wait_seconds")
            if not (isinstance(waits, list) and len(waits) == devices and
                    # Each rank's loop starts and ends with rank 0's, give or take
                    # the agreement before it and the last loss after it.
                    all(0 <= w <= metrics["seconds"] + 0.1 for w in waits)):
                sys.exit(f"{model}: {name}: devices_wait_seconds {waits!r} is not one share of "
                         f"the {metrics['seconds']} s training loop per device")
            if reference.get("devices_wait_seconds") is not None:
                sys.exit(f"{model}: one device reports devices_wait_seconds")
            for key in ("final_loss", "test_loss", "test_accuracy", "skipped_steps", "loss_scale"):
                if metrics[key] != reference[key]:
                    sys.exit(f"{model}: {name}: {key} {metrics[key]!r} differs from one "
                             f"device's {reference[key]!r}")
        if args.precision == "f16" and not reference.get("skipped_steps"):
            sys.exit(f"{model}: f16's loss scaler skipped no step "
                     f"(--loss-scale {args.loss_scale}): the overflow check went untested")
        under = f" under --memory-budget {budget}" if budget is not None else ""
        print(f"{model}: on {devices} devices{under} (arenas {arenas} bytes, one device {one_arena}) "
              f"trains {args.steps} steps to the bits of one device, with --poison too "
              f"(final loss {reference['final_loss']!r}"
              + (f", {reference['skipped_steps']} steps skipped" if args.precision == "f16" else "")
              + ")")


if __name__ == "__main__":
    main()
