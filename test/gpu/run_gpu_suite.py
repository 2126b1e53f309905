#!/usr/bin/env python3
"""Cairn's GPU checks, run on a machine with an NVIDIA GPU from a bundle made elsewhere.

Here, where Cairn is built (build/bin/cairn with the CUDA backend):
    bash scripts/gpu-bundle.sh                      # makes build/gpu-bundle (under 60 MiB)
There, with python3 and numpy (PyTorch optional), the NVIDIA driver, libcublasLt.so.13 and
libcudnn.so.9 (from /usr/local/cuda or PyTorch's nvidia-* wheels, found by this script):
    python3 build/gpu-bundle/run_gpu_suite.py --out RESULTS [--checks abcdef] [--models ...]
        [--work /tmp/cairn-gpu-suite] [--time-budget SECONDS] [--train-steps N]
Writes RESULTS/gpu-suite-DATE.md (machine, bundle commit, every check's numbers), the same as
JSON, and gpu-suite-DATE.log (every command with the end of its output). Each check is
reported PASS, FAIL or SKIP; exits 0 only when every result is PASS (a SKIP, say for want of
compute-sanitizer, is not a pass), 1 otherwise, and 77 when
there is no GPU (no nvidia-smi, no device listed, or an executable saying "no CUDA device").

The checks (each example of the bundle, examples/*.cairn):
  a  the GPU kernel tests (cairn-cuda-kernel-tests: every CUDA kernel against its CPU twin), and
     cairn-cuda-collective-tests: every NCCL call of a step of several processes on a
     communicator of one rank (libnccl.so.2 from the machine's nvidia-nccl wheel)
  b  `EXE step` on the GPU against the CPU executable, from the same initial weights and batch
     (the batch of test/reference/check_step_agreement.py, at its batch sizes): loss, output,
     gradients, buffers, updated weights and optimizer state agree to 1e-4 relative to
     max|x| of each tensor. Cairn's kernels use no TF32. As in check_step_agreement.py, when
     PyTorch is importable the allowed error of a tensor that is rounding noise in any
     float32 code is raised to 10x PyTorch float32's own error against float64, and ReLU
     inputs within float32's error of 0 may take either derivative (per-element slack); the
     updated weights and optimizer state are compared less what the gradients' accepted
     difference explains, and the GPU's update is checked against the optimizer rule applied
     to its own gradients in float64 ("delta.<param>"). The table gives the worst
     error/allowed and the plain max|gpu - cpu| / (1e-4 max|cpu|).
  c  bit identity: `step --deterministic` of the executable, again, with --poison, from
     the --no-reuse build and from the recomputing build (--memory-budget at half the plain
     arena; also with --poison) give byte-identical files; `train --steps 30 --deterministic
     --save` the same six ways gives byte-identical weights and optimizer state, and equal
     losses and accuracy.
  d  memory: `train --steps 20` and `--steps 200 --metrics`: device_arena_bytes is
     planned_arena_bytes rounded up to 256 (and planned is the build's memory report's
     arena), measured_peak_bytes <= planned, and device_overhead_bytes (everything besides
     the arena: context, cuBLASLt, cuDNN, graphs) the same after 20 and 200 steps (or within
     one 2 MiB driver page), so nothing is allocated in the step loop.
  e  compute-sanitizer --tool memcheck on `train --steps 3 --no-graph` (the agreement batch, a
     512-example data set): "ERROR SUMMARY: 0 errors".
  f  a short training run (--epochs 1 on Fashion-MNIST; ResNet-18's 3x32x32 inputs are the
     images padded and repeated over 3 channels): loss and test accuracy, for the record;
     fails when the run fails, the loss is not finite, or the accuracy is below a floor.

Half precision: the bundle's MODEL-bf16 and MODEL-f16 entries (gpu-bundle.sh --precisions) are
built with --precision and go through every check as the others do, against the CPU executable
of the same precision. Both backends store half tensors and compute in float32, with the same
rounding of every value to half; only float32's rounding inside a GEMM, a convolution or a
reduction differs, and where it moves a value across a rounding boundary the two half values
differ by one unit in the last place (2^-8 relative for bf16, 2^-11 for f16), which later ops
carry on. So check b compares them to HALF_TOLERANCE (16 such units of max|x| of each tensor)
instead of 1e-4, without PyTorch's float32 allowances but with a noise allowance of twice the
CPU half step's distance from the CPU float32 step (a bias gradient in front of a batch norm is
zero but for rounding: its max|x| is the noise); the update rule keeps the float32
tolerance, since master weights and optimizer state are float32 (f16 steps also must not be
skipped: the loss scale starts at 2^16 as GradScaler's). Checks c to f are as for float32.

--host-run runs a bundle of CPU executables (`gpu-bundle.sh --target cpu`) on a machine
without a GPU: the same plumbing with the CUDA-only parts (kernel tests, --deterministic,
--no-graph, device memory, the sanitizer) skipped; it checks this script, not the GPU.
"""
import argparse
import datetime
import json
import math
import os
import platform
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_common as gc  # noqa: E402

import numpy as np  # noqa: E402

CHECKS = {
    "a": "GPU kernel tests",
    "b": "one step on the GPU against the CPU",
    "c": "bit identity (deterministic, --poison, --no-reuse, recomputation)",
    "d": "memory: arena, peak, overhead",
    "e": "compute-sanitizer memcheck",
    "f": "training run",
}
# Test accuracy after one epoch below which check f fails (None: no floor), about ten points
# under what the CPU executables reach (seed 0, 2026-11-22: mlp 80.3%, cnn 86.3%, transformer
# 84.6%); the GPU's rounding differs, its accuracy should not by much. ResNet-18's epoch is
# hours on the CPU here, so its floor only catches a run that does not learn. deep_mlp's 64
# ReLU layers at PyTorch's default initialisation do not learn in one epoch at lr 0.01 (10.0%
# on the CPU): no floor.
# Check b's tolerance for half-precision entries, relative to max|x| of each tensor: 16 units
# in the last place of the half type (see the docstring).
HALF_TOLERANCE = {"bf16": 16 * 2.0 ** -8, "f16": 16 * 2.0 ** -11}
ACCURACY_FLOOR = {"mlp": 0.7, "cnn": 0.75, "transformer": 0.75, "resnet18": 0.5,
                  "deep_mlp": None}
SANITIZER_DATA = (512, 256)  # training and test examples of check e's data set


def default_bundle():
    if os.path.isfile(os.path.join(HERE, "MANIFEST.json")):
        return HERE
    return os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "gpu-bundle")


class Suite:
    def __init__(self, args):
        self.args = args
        self.started = time.monotonic()
        self.date = datetime.datetime.now(datetime.timezone.utc)
        stem = "gpu-suite-" + self.date.strftime("%Y-%m-%d")
        if args.checks != "abcdef":
            stem += "-" + args.checks
        os.makedirs(args.out, exist_ok=True)
        self.report_path = os.path.join(args.out, stem + ".md")
        self.json_path = os.path.join(args.out, stem + ".json")
        self.log_path = os.path.join(args.out, stem + ".log")
        open(self.log_path, "w").close()
        self.results = []
        self.machine = []
        self.host = args.host_run
        self.run = None
        self.bundle = None

    # -- results and the report

    def add(self, check, model, status, numbers, detail=""):
        self.results.append({"check": check, "model": model, "status": status,
                             "numbers": numbers, "detail": detail})
        print(f"[{check}] {model}: {status}  {numbers}" + (f"\n    {detail}" if detail and
                                                          status != "PASS" else ""), flush=True)
        self.write_report()

    def write_report(self, headline=None):
        counts = {s: sum(r["status"] == s for r in self.results) for s in ("PASS", "FAIL", "SKIP")}
        lines = [f"# Cairn GPU suite, {self.date.strftime('%Y-%m-%d %H:%M UTC')}", ""]
        if headline:
            lines += [headline, ""]
        lines += [f"- {m}" for m in self.machine]
        lines += [f"- command: `{' '.join(sys.argv)}`",
                  f"- results: {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP"
                  f" ({time.monotonic() - self.started:.0f} s)"]
        for check in ["-"] + list(self.args.checks):
            rows = [r for r in self.results if r["check"] == check]
            if not rows:
                continue
            title = f"{check}. {CHECKS[check]}" if check in CHECKS else "setting up"
            lines += ["", f"## {title}", "",
                      gc.markdown_table(["model", "result", "numbers"],
                                        [[r["model"], r["status"], r["numbers"]] for r in rows])]
            details = [r for r in rows if r["detail"]]
            for r in details:
                lines += ["", f"{r['model']} ({r['status']}):", "", "```", r["detail"].rstrip(),
                          "```"]
        with open(self.report_path, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(self.json_path, "w") as f:
            json.dump({"date": self.date.isoformat(), "machine": self.machine,
                       "results": self.results}, f, indent=1)

    def over_budget(self):
        budget = self.args.time_budget
        return budget and time.monotonic() - self.started > budget

    # -- helpers

    def flags(self, *names):
        """CUDA-only flags, left out on --host-run (the CPU refuses them)."""
        return [] if self.host else list(names)

    def exe(self, model, role):
        return self.bundle.exe(self.bundle.model(model)["exe"][role])

    def work(self, model, *parts):
        path = os.path.join(self.args.work, model, *parts)
        os.makedirs(os.path.dirname(path) if parts else path, exist_ok=True)
        return path

    def data(self, model, small=False):
        shape = self.bundle.model(model)["image_shape"]
        counts = SANITIZER_DATA if small else (None, None)
        return gc.data_dir(self.bundle.path("data", "fashion-mnist"), self.args.work, shape,
                           *counts)

    def must(self, cmd, timeout=600):
        rc, out, seconds = self.run(cmd, timeout=timeout)
        if rc != 0:
            raise RuntimeError(f"{os.path.basename(str(cmd[0]))} {' '.join(map(str, cmd[1:]))} "
                               f"exited with {rc}:\n{gc.tail(out, 15)}")
        return out, seconds

    def init_weights(self, model):
        """The CPU executable's `init --seed S` on this machine (shared by checks b and c)."""
        path = self.work(model, "init.safetensors")
        if not os.path.isfile(path):
            self.must([self.exe(model, "cpu_agree"), "init", "--seed",
                       self.bundle.manifest["init_seed"], "--save", path])
        return path

    # -- a

    def check_a(self):
        if self.host:
            return self.add("a", "-", "SKIP", "CUDA only (--host-run)")
        # The kernels against their CPU twins; NCCL's calls of the steps of several processes
        # on a communicator of one rank (libnccl from the machine's nvidia-nccl wheel).
        for key, row, name in (("kernel_tests", "-", "cairn-cuda-kernel-tests"),
                               ("collective_tests", "nccl", "cairn-cuda-collective-tests")):
            rel = self.bundle.manifest.get(key)
            if not rel:
                self.add("a", row, "SKIP", f"{name} is not in the bundle "
                         "(it was not built where the bundle was made)")
                continue
            env = None
            if key == "collective_tests":
                # libnccl.so.2 is this machine's (its nvidia-nccl wheel), needed by this test
                # alone: without it, this row is skipped and the rest of the suite runs.
                env, _, missing = gc.resolve_libraries([self.bundle.exe(rel)], self.run.env)
                if missing:
                    self.add("a", row, "SKIP", f"{name}: not found here: {', '.join(missing)} "
                             "(set CAIRN_CUDA_LIB_DIRS to the folder of libnccl.so.2)")
                    continue
            rc, out, seconds = self.run([self.bundle.exe(rel), "--gtest_color=no"],
                                        timeout=500, env=env, check_device=False)
            passed = _count(out, "[  PASSED  ]")
            failed = _count(out, "[  FAILED  ]")
            names = [l.split("]", 1)[1].strip() for l in out.splitlines()
                     if l.startswith("[  FAILED  ]")
                     and not l.split("]", 1)[1].strip()[:1].isdigit()]
            numbers = f"{passed} passed, {failed} failed, {seconds:.0f} s"
            if rc == 0 and failed == 0 and passed > 0:
                self.add("a", row, "PASS", numbers)
            else:
                self.add("a", row, "FAIL", f"exit {rc}; {numbers}",
                         "\n".join(names[:30]) or gc.tail(out, 20))

    # -- b

    def torch_allowances(self, model, init_path, batch_path):
        """(noise, slack, ties, note) from PyTorch (check_step_agreement.torch_references), or
        empty allowances and why there are none."""
        try:
            import torch  # noqa: F401
        except ImportError:
            return {}, {}, 0, "no allowances: PyTorch is not importable"
        try:
            sys.path.insert(0, self.bundle.path("reference"))
            import check_step_agreement as csa
            from pytorch_models import MODELS
            if model not in MODELS:
                return {}, {}, 0, f"no allowances: no PyTorch model '{model}'"
            torch.set_num_threads(max(1, os.cpu_count() or 1))
            weights = csa.read_safetensors(init_path)
            batch = csa.read_safetensors(batch_path)
            torch.manual_seed(0)
            net = MODELS[model][0]()
            net.load_state_dict(weights, strict=True)
            _, noise, slack, ties = csa.torch_references(
                net, self.bundle.path(self.bundle.model(model)["source"]), batch,
                self.bundle.manifest["step_seed"])
            noise = {k: float(v) for k, v in noise.items()}
            slack = {k: v.numpy() for k, v in slack.items()}
            return noise, slack, ties, f"allowances from PyTorch {torch.__version__}"
        except Exception as e:  # the allowances only ever widen; report and go on without
            return {}, {}, 0, f"no allowances: PyTorch reference failed: {type(e).__name__}: {e}"

    def half_noise(self, model, init_path, batch_path, cpu):
        """{tensor: 2 max|cpu_half - cpu_f32|}: the CPU half step's own distance from the
        float32 step on the same weights and batch. A tensor that is rounding noise in half
        (a bias gradient in front of a batch norm, zero but for rounding) may differ by that
        much between two half steps; for the others it is below the half tolerance."""
        exe = self.bundle.model(model)["exe"].get("cpu_agree_f32")
        if not exe or not os.path.isfile(self.bundle.exe(exe)):
            return {}
        out = self.work(model, "cpu-f32.safetensors")
        self.must([self.bundle.exe(exe), "step", "--load", init_path, "--batch", batch_path,
                   "--out", out, "--seed", self.bundle.manifest["step_seed"]])
        f32 = gc.read_safetensors(out)
        noise = {}
        for name, a in cpu.items():
            if name in f32 and a.shape == f32[name].shape and a.dtype.kind == "f" and a.size:
                noise[name] = 2.0 * float(np.max(np.abs(a.astype(np.float64) -
                                                        f32[name].astype(np.float64))))
        return noise

    def check_b(self, model):
        info = self.bundle.model(model)
        seed = self.bundle.manifest["step_seed"]
        batch_path = self.bundle.path(info["ref"]["batch"])
        init_path = self.init_weights(model)
        notes = []
        same = gc.sha256_file(init_path) == info["ref"]["init_sha256"]
        notes.append("CPU init here " + ("bit-identical to" if same else "DIFFERS from")
                     + " the bundle machine's")
        gpu_init = self.work(model, "init-gpu.safetensors")
        self.must([self.exe(model, "agree"), "init", "--seed", self.bundle.manifest["init_seed"],
                   "--save", gpu_init])
        gpu_same = gc.compare_bits(init_path, gpu_init) is None
        notes.append("GPU executable's init " + ("bit-identical" if gpu_same else "DIFFERS"))
        cpu_out, gpu_out = self.work(model, "cpu.safetensors"), self.work(model, "gpu.safetensors")
        self.must([self.exe(model, "cpu_agree"), "step", "--load", init_path, "--batch",
                   batch_path, "--out", cpu_out, "--seed", seed])
        self.must([self.exe(model, "agree"), "step", "--load", init_path, "--batch", batch_path,
                   "--out", gpu_out, "--seed", seed])
        cpu, gpu = gc.read_safetensors(cpu_out), gc.read_safetensors(gpu_out)
        init = gc.read_safetensors(init_path)
        here = info["ref"]["cpu_step"].get("loss", {}).get("value")
        if here is not None and "loss" in cpu:
            loss = float(cpu["loss"].reshape(-1)[0])
            rel = abs(loss - here) / max(abs(here), gc.TINY)
            notes.append(f"CPU loss {loss:.7g}, {rel:.2g} relative from the bundle machine's")
        precision = info.get("precision", "f32")
        tolerance = self.args.tolerance
        if precision in HALF_TOLERANCE:
            tolerance = HALF_TOLERANCE[precision]
            noise, slack, ties = self.half_noise(model, init_path, batch_path, cpu), {}, 0
            notes.append(f"{precision}: tolerance {tolerance:.3g} of max|x| (16 ulps of "
                         f"{precision}), noise: twice the CPU {precision} step's distance from "
                         f"its float32 step ({len(noise)} tensors), no PyTorch allowances")
            skipped = float(cpu.get("found_inf", np.zeros(1)).reshape(-1)[0]), \
                float(gpu.get("found_inf", np.zeros(1)).reshape(-1)[0])
            if "found_inf" in cpu or "found_inf" in gpu:
                notes.append(f"found_inf cpu {skipped[0]:g} gpu {skipped[1]:g}")
        else:
            noise, slack, ties, allowance_note = self.torch_allowances(model, init_path,
                                                                       batch_path)
            notes.append(allowance_note + (f" ({ties} near-tie ReLU inputs)" if ties else ""))
        optimizer = gc.parse_optimizer(info["optimizer"])
        rows = gc.compare_step(gpu, cpu, init, optimizer, tolerance, noise, slack)
        if precision in HALF_TOLERANCE:
            # The update rule is float32 arithmetic on float32 master weights: the float32
            # tolerance, against the GPU's own gradients.
            rows = [r for r in rows if r["kind"] == "agree"] + [
                r for r in gc.compare_step(gpu, cpu, init, optimizer, self.args.tolerance)
                if r["kind"] == "rule"]
        failing = [r for r in rows if gc.row_fails(r)]
        agree = [r for r in rows if r["kind"] == "agree"]
        rule = [r for r in rows if r["kind"] == "rule"]
        worst_agree = agree[0] if agree else None
        worst_strict = max((r["strict"] for r in agree), default=0.0)
        widened = sum(r["strict"] > 1 and not gc.row_fails(r) for r in agree)
        numbers = (f"batch {info['agree_batch']}, {len(agree)} tensors; worst "
                   f"{_worst(worst_agree)}; plain max|gpu-cpu|/({tolerance:.3g} max|cpu|) "
                   f"{worst_strict:.3g}"
                   f" ({widened} tensors needed an allowance); update rule worst "
                   f"{_worst(rule[0] if rule else None)}; loss gpu {_scalar(gpu, 'loss')} cpu "
                   f"{_scalar(cpu, 'loss')}")
        detail = "\n".join(notes)
        if failing:
            detail += "\n" + "\n".join(
                f"{r['name']}: error {r['error']:.3g} > allowed {r['allowed']:.3g} ({r['note']})"
                for r in failing[:15])
        self.add("b", model, "FAIL" if failing else "PASS", numbers, detail)

    # -- c

    def check_c(self, model):
        info = self.bundle.model(model)
        seed = str(self.bundle.manifest["step_seed"])
        batch_path = self.work(model, f"batch-{info['batch']}.safetensors")
        gc.write_safetensors(batch_path, gc.make_batch(info["inputs"]))
        init_path = self.init_weights(model)
        normal, noreuse = self.exe(model, "normal"), self.exe(model, "noreuse")
        det = self.flags("--deterministic")
        variants = [("normal", [normal]), ("again", [normal]), ("poison", [normal, "--poison"]),
                    ("no-reuse", [noreuse])]
        if "recompute" in info["exe"]:  # bundles made before recomputation have none
            recompute = self.exe(model, "recompute")
            variants += [("recompute", [recompute]), ("recompute-poison", [recompute, "--poison"])]
        steps = {}
        for name, cmd in variants:
            out = self.work(model, f"step-{name}.safetensors")
            self.must([cmd[0], "step", "--load", init_path, "--batch", batch_path, "--out", out,
                       "--seed", seed] + det + cmd[1:])
            steps[name] = out
        problems = []
        for name, _ in variants[1:]:
            diff = gc.compare_bits(steps["normal"], steps[name])
            if diff:
                problems.append(f"step {name}: {diff}")
        data = self.data(model)
        trains = {}
        for name, cmd in variants:
            weights = self.work(model, f"train-{name}.safetensors")
            metrics = self.work(model, f"train-{name}.json")
            self.must([cmd[0], "train", "--data", data, "--steps", "30", "--seed", seed,
                       "--load", init_path, "--save", weights, "--metrics", metrics]
                      + det + cmd[1:])
            with open(metrics) as f:
                trains[name] = (weights, json.load(f))
        for name, _ in variants[1:]:
            diff = gc.compare_bits(trains["normal"][0], trains[name][0])
            if diff:
                problems.append(f"train {name}: {diff}")
            for key in ("final_loss", "test_loss", "test_accuracy"):
                if trains[name][1].get(key) != trains["normal"][1].get(key):
                    problems.append(f"train {name}: {key} {trains[name][1].get(key)!r} against "
                                    f"{trains['normal'][1].get(key)!r}")
        m = trains["normal"][1]
        runs = len(variants)
        numbers = (f"step x{runs} and train --steps 30 x{runs} "
                   f"{'identical' if not problems else 'DIFFER'}"
                   f" (batch {info['batch']}; final loss {m.get('final_loss')!r}, test accuracy "
                   f"{m.get('test_accuracy')!r})")
        self.add("c", model, "FAIL" if problems else "PASS", numbers, "\n".join(problems))

    # -- d

    def check_d(self, model):
        info = self.bundle.model(model)
        data = self.data(model)
        metrics = {}
        for steps in (20, 200):
            path = self.work(model, f"memory-{steps}.json")
            self.must([self.exe(model, "normal"), "train", "--data", data, "--steps", steps,
                       "--seed", "0", "--metrics", path])
            with open(path) as f:
                metrics[steps] = json.load(f)
        plan = info["plan"]["normal"]["arena_bytes"]
        problems = []
        for steps, m in metrics.items():
            problems += [f"--steps {steps}: {p}"
                         for p in gc.check_memory(m, plan, gpu=not self.host)]
        short, long = metrics[20], metrics[200]
        if self.host:
            overhead = "device overhead: n/a on the CPU"
        else:
            ok, sentence = gc.compare_overhead(short, long)
            if not ok:
                problems.append(f"device_overhead_bytes after 20 and 200 steps: {sentence}")
            overhead = (f"device overhead {gc.format_bytes(short.get('device_overhead_bytes'))} "
                        f"after 20 steps, {gc.format_bytes(long.get('device_overhead_bytes'))} "
                        f"after 200 ({sentence})")
        peak, planned = long.get("measured_peak_bytes"), long.get("planned_arena_bytes")
        numbers = (f"batch {info['batch']}: planned {gc.format_bytes(planned)} ({planned} B), "
                   f"device arena {long.get('device_arena_bytes')!r} B, measured peak "
                   f"{gc.format_bytes(peak)} ({100 * peak / planned if planned else 0:.1f}% of "
                   f"plan); {overhead}; host RSS after warm-up "
                   f"{gc.format_bytes(long.get('rss_after_warmup_bytes'))}, at end "
                   f"{gc.format_bytes(long.get('rss_at_end_bytes'))}")
        self.add("d", model, "FAIL" if problems else "PASS", numbers, "\n".join(problems))

    # -- e

    def check_e(self, model):
        if self.host:
            return self.add("e", model, "SKIP", "CUDA only (--host-run)")
        sanitizer = gc.find_compute_sanitizer()
        if not sanitizer:
            return self.add("e", model, "SKIP", "compute-sanitizer not found (PATH, "
                            "/usr/local/cuda*/bin, /opt/nvidia)")
        info = self.bundle.model(model)
        data = self.data(model, small=True)
        rc, out, seconds = self.run(
            [sanitizer, "--tool", "memcheck", "--error-exitcode", "99",
             self.exe(model, "agree"), "train", "--steps", "3", "--no-graph", "--data", data,
             "--seed", "0"], timeout=self.args.sanitizer_timeout)
        summary = next((l.strip() for l in reversed(out.splitlines()) if "ERROR SUMMARY" in l),
                       "no ERROR SUMMARY line")
        ok = rc == 0 and "ERROR SUMMARY: 0 errors" in out
        numbers = (f"batch {info['agree_batch']}: {summary.replace('========= ', '')} "
                   f"({seconds:.0f} s)")
        self.add("e", model, "PASS" if ok else "FAIL", numbers,
                 "" if ok else f"exit {rc}\n{gc.tail(out, 25)}")

    # -- f

    def check_f(self, model):
        info = self.bundle.model(model)
        data = self.data(model)
        path = self.work(model, "train-epoch.json")
        length = (["--steps", self.args.train_steps] if self.args.train_steps
                  else ["--epochs", self.args.train_epochs])
        self.must([self.exe(model, "normal"), "train", "--data", data, "--seed", "0",
                   "--metrics", path] + length, timeout=self.args.train_timeout)
        with open(path) as f:
            m = json.load(f)
        loss, accuracy = m.get("final_loss"), m.get("test_accuracy")
        subset = self.bundle.manifest.get("train_subset")
        floor = (None if self.args.train_steps or subset
                 else ACCURACY_FLOOR.get(info.get("base", model)))
        problems = []
        if not isinstance(loss, (int, float)) or not math.isfinite(loss):
            problems.append(f"final loss {loss!r}")
        if floor is not None and (accuracy is None or accuracy < floor):
            problems.append(f"test accuracy {accuracy!r} below {floor}")
        numbers = (f"batch {info['batch']}, {' '.join(map(str, length))} ({m.get('steps')} steps, "
                   f"{m.get('seconds', 0):.1f} s, {m.get('examples_per_second', 0):.0f} "
                   f"examples/s):"
                   f" final loss {_num(loss)}, test accuracy {_num(accuracy)}, test loss "
                   f"{_num(m.get('test_loss'))}" + (f" (floor {floor})" if floor else "")
                   + (f" (the first {subset} training examples)" if subset else ""))
        self.add("f", model, "FAIL" if problems else "PASS", numbers, "\n".join(problems))


def _count(text, marker):
    for line in text.splitlines():
        if line.startswith(marker):
            words = line[len(marker):].split()
            if words and words[0].isdigit():
                return int(words[0])
    return 0


def _worst(row):
    if row is None:
        return "-"
    return f"{row['name']} {row['error']:.3g} (allowed {row['allowed']:.3g})"


def _scalar(tensors, name):
    return f"{float(tensors[name].reshape(-1)[0]):.7g}" if name in tensors else "-"


def _num(x):
    return f"{x:.4f}" if isinstance(x, (int, float)) else repr(x)


def machine_lines(suite, info):
    bundle = suite.bundle.manifest
    lines = []
    if info:
        lines.append(f"GPU: {info['name']} ({info['memory']}, compute capability "
                     f"{info['compute_capability']}; {info['count']} listed), driver "
                     f"{info['driver']} (CUDA {info['driver_cuda']})")
    lines.append(f"CPU: {gc.cpu_name()}; {platform.platform()}; Python "
                 f"{platform.python_version()}, numpy {np.__version__}" + _torch_version())
    lines.append(f"bundle: commit {bundle['commit']}, made {bundle['date']} on "
                 f"{bundle['built_on']} by {bundle['cairn']}; target {bundle['target']}; its "
                 f"executables need {bundle.get('needs', '?')} or newer")
    return lines


def _torch_version():
    try:
        import importlib.metadata
        return f", torch {importlib.metadata.version('torch')}"
    except Exception:
        return ", no torch"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--out", required=True, help="folder for the report, its JSON and the log")
    ap.add_argument("--bundle", default=default_bundle(), help="the bundle (default: this "
                    "script's folder when it is one, else build/gpu-bundle)")
    ap.add_argument("--work", default="/tmp/cairn-gpu-suite", help="scratch folder")
    ap.add_argument("--checks", default="abcdef", help="which checks, e.g. 'bc' (default all)")
    ap.add_argument("--models", nargs="+", help="examples to check (default: the bundle's)")
    ap.add_argument("--tolerance", type=float, default=gc.TOLERANCE)
    ap.add_argument("--train-epochs", type=int, default=1, help="check f's length")
    ap.add_argument("--train-steps", type=int, help="check f: --steps N instead of epochs "
                    "(no accuracy floor)")
    ap.add_argument("--train-timeout", type=int, default=400)
    ap.add_argument("--sanitizer-timeout", type=int, default=400)
    ap.add_argument("--time-budget", type=float, default=0, help="seconds after which no new "
                    "model or check is started (what was left is reported SKIP); 0: none")
    ap.add_argument("--host-run", action="store_true", help="run a --target cpu bundle on a "
                    "machine without a GPU (checks this script; skips the CUDA-only parts)")
    args = ap.parse_args()
    if not args.checks or any(c not in CHECKS for c in args.checks):
        ap.error(f"--checks takes letters of {''.join(CHECKS)}, not '{args.checks}'")

    suite = Suite(args)
    info = None
    if not args.host_run:
        info, why = gc.gpu_info()
        if info is None:
            message = f"run_gpu_suite: no GPU: {why}; nothing checked (exit 77)"
            suite.write_report(message)
            print(message)
            return 77
    try:
        suite.bundle = gc.Bundle(args.bundle)
    except (FileNotFoundError, ValueError) as e:
        print(f"run_gpu_suite: {e}", file=sys.stderr)
        return 1
    target = suite.bundle.manifest["target"]
    if (target == "cpu") != args.host_run:
        print(f"run_gpu_suite: the bundle at {args.bundle} holds {target} executables; "
              + ("run it without --host-run" if target == "cuda" else
                 "run it with --host-run, or make a CUDA bundle (gpu-bundle.sh --target cuda)"),
              file=sys.stderr)
        return 1
    args.work = os.path.join(args.work, suite.bundle.key)
    os.makedirs(args.work, exist_ok=True)
    try:
        suite.bundle.unpack(args.work)
    except (RuntimeError, OSError, tarfile.TarError) as e:
        print(f"run_gpu_suite: {e}", file=sys.stderr)
        return 1
    models = args.models or suite.bundle.models()
    unknown = [m for m in models if m not in suite.bundle.manifest["models"]]
    if unknown:
        print(f"run_gpu_suite: not in the bundle: {', '.join(unknown)}", file=sys.stderr)
        return 1

    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(
        [suite.bundle.lib_dir] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    exes = [suite.exe(m, role) for m in models for role in ("normal", "cpu_agree")]
    if suite.bundle.manifest.get("kernel_tests"):
        exes.append(suite.bundle.exe(suite.bundle.manifest["kernel_tests"]))
    env, found, missing = gc.resolve_libraries(exes, env)
    suite.run = gc.Runner(suite.log_path, env)
    suite.machine = machine_lines(suite, info)
    if found:
        suite.machine.append("libraries found for the executables: " +
                             ", ".join(f"{s} in {d}" for s, d in found))
    rc, version, _ = suite.run([exes[0], "--version"], timeout=60, check_device=False)
    first = version.strip().splitlines()[0] if rc == 0 and version.strip() else f"exit {rc}"
    suite.machine.append(f"executables: {first}")
    if missing:
        suite.add("-", "-", "FAIL", f"libraries not found: {', '.join(missing)}",
                  "set CAIRN_CUDA_LIB_DIRS=DIR:... to the folders holding them")
        return 1

    try:
        for check in args.checks:
            units = ["-"] if check == "a" else models
            for model in units:
                if suite.over_budget():
                    suite.add(check, model, "SKIP",
                              f"not run: --time-budget {args.time_budget:g} s spent")
                    continue
                try:
                    getattr(suite, "check_" + check)(*([] if check == "a" else [model]))
                except gc.NoDevice:
                    raise
                except Exception as e:  # one model's failure must not hide the others' results
                    suite.add(check, model, "FAIL", f"{type(e).__name__}", str(e))
    except gc.NoDevice as e:
        message = f"run_gpu_suite: no GPU usable: an executable said: {e}; exit 77"
        suite.write_report(message)
        print(message)
        return 77
    suite.write_report()
    counts = {s: sum(r["status"] == s for r in suite.results) for s in ("PASS", "FAIL", "SKIP")}
    print(f"\n{counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP; report: "
          f"{suite.report_path}")
    return 0 if counts["PASS"] and not counts["FAIL"] and not counts["SKIP"] else 1


if __name__ == "__main__":
    sys.exit(main())
