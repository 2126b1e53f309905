#!/usr/bin/env python3
"""Self-test of the GPU suite's Python, run by ctest (gpu-suite-selftest) where there is no GPU,
so that the suite cannot rot between the rare runs on a GPU machine.

- the comparisons of gpu_common on synthetic `EXE step` outputs written to and read back from
  safetensors files: a GPU output within 1e-5 of the CPU's (relative to each tensor's max)
  passes at tolerance 1e-4, one off by 1e-3 fails; a wrong update rule, a missing tensor, a
  changed integer, a NaN fail; Adam's first step on a gradient near 0 whose sign differs
  passes through the gradient-explained allowance and fails without it; noise and ReLU-tie
  allowances widen exactly the tensors they name;
- the bit comparison, the memory and overhead rules, the optimizer parser, the batch maker
  (check_step_agreement.py's draws), ResNet-18's padded images, the IDX reader;
- the report: a Suite with results writes a Markdown table and JSON;
- run_gpu_suite.py exits 77 with its message when there is no nvidia-smi, and when
  nvidia-smi lists a GPU but an executable says "no CUDA device" (a fake bundle).

  /usr/bin/python3 test/gpu/selftest.py [-v]
"""
import gzip
import io
import json
import os
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_common as gc  # noqa: E402
import numpy as np  # noqa: E402

SGD = ("#cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0005, "
       "nesterov = false>")
ADAM = "#cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.0>"


def synthetic_step(optimizer_text, seed=0):
    """(init, cpu step output) of a small model: two params with gradients, a BatchNorm
    buffer pair, loss and output, the update by the optimizer's first step in float32."""
    rng = np.random.default_rng(seed)
    init = {"fc.weight": rng.uniform(-0.2, 0.2, (16, 12)).astype(np.float32),
            "fc.bias": rng.uniform(-0.2, 0.2, (16,)).astype(np.float32),
            "bn.running_mean": np.zeros(16, np.float32),
            "bn.num_batches_tracked": np.zeros((), np.int64)}
    optimizer = gc.parse_optimizer(optimizer_text)
    out = {"loss": np.float32(2.3).reshape(()),
           "output": rng.standard_normal((4, 10)).astype(np.float32),
           "bn.running_mean": rng.standard_normal(16).astype(np.float32) * 0.1,
           "bn.num_batches_tracked": np.ones((), np.int64)}
    for p in ("fc.weight", "fc.bias"):
        g = rng.standard_normal(init[p].shape).astype(np.float32) * 0.05
        out["grad." + p] = g
        for key, value in gc.first_update(optimizer, init[p], g).items():
            out[p if key == "param" else f"{p}.{key}"] = value.astype(np.float32)
    return init, out, optimizer


def perturbed(init, cpu, optimizer, relative, seed=1):
    """A GPU output: every float element of `cpu` moved by 0.5 to 1 x `relative` x its tensor's
    max|x|, either way, and
    the update recomputed from the moved gradients (a GPU whose update rule is right)."""
    rng = np.random.default_rng(seed)
    gpu = {}
    for name, x in cpu.items():
        if x.dtype.kind == "f":
            size = rng.uniform(0.5, 1, x.shape) * rng.choice([-1.0, 1.0], x.shape)
            noise = size * relative * gc.max_abs(x)
            gpu[name] = (x.astype(np.float64) + noise).astype(np.float32)
        else:
            gpu[name] = x.copy()
    for p in ("fc.weight", "fc.bias"):
        for key, value in gc.first_update(optimizer, init[p], gpu["grad." + p]).items():
            gpu[p if key == "param" else f"{p}.{key}"] = value.astype(np.float32)
    return gpu


def failures(rows):
    return [r["name"] for r in rows if gc.row_fails(r)]


class Comparisons(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def through_files(self, init, cpu, gpu):
        """Writes the three as safetensors and reads them back."""
        paths = {}
        for name, tensors in (("init", init), ("cpu", cpu), ("gpu", gpu)):
            paths[name] = os.path.join(self.dir, name + ".safetensors")
            gc.write_safetensors(paths[name], tensors)
        return tuple(gc.read_safetensors(paths[n]) for n in ("init", "cpu", "gpu"))

    def test_noise_1e5_passes_and_1e3_fails(self):
        for text in (SGD, ADAM):
            init, cpu, opt = synthetic_step(text)
            small = self.through_files(init, cpu, perturbed(init, cpu, opt, 1e-5))
            rows = gc.compare_step(small[2], small[1], small[0], opt)
            self.assertEqual(failures(rows), [], text)
            self.assertLess(max(r["error"] / r["allowed"] for r in rows), 0.2)
            large = self.through_files(init, cpu, perturbed(init, cpu, opt, 1e-3))
            bad = failures(gc.compare_step(large[2], large[1], large[0], opt))
            for name in ("loss", "output", "grad.fc.weight", "grad.fc.bias", "bn.running_mean"):
                self.assertIn(name, bad, text)

    def test_every_tensor_is_compared(self):
        init, cpu, opt = synthetic_step(SGD)
        rows = gc.compare_step(perturbed(init, cpu, opt, 0), cpu, init, opt)
        names = {r["name"] for r in rows}
        self.assertTrue(set(cpu) <= names)
        self.assertIn("delta.fc.weight", names)
        self.assertIn("rule:fc.weight.momentum_buffer", names)

    def test_wrong_update_rule_fails(self):
        init, cpu, opt = synthetic_step(SGD)
        gpu = perturbed(init, cpu, opt, 1e-6)
        # lr 10% too small on the GPU: the weights themselves still agree to 1e-4 of max|w|,
        # but the update does not.
        gpu["fc.weight"] = (init["fc.weight"] + 0.9 * (cpu["fc.weight"].astype(np.float64)
                                                      - init["fc.weight"])).astype(np.float32)
        bad = failures(gc.compare_step(gpu, cpu, init, opt))
        self.assertIn("delta.fc.weight", bad)

    def test_missing_integer_nan(self):
        init, cpu, opt = synthetic_step(SGD)
        gpu = perturbed(init, cpu, opt, 0)
        del gpu["output"]
        gpu["bn.num_batches_tracked"] = np.full((), 2, np.int64)
        gpu["grad.fc.bias"] = gpu["grad.fc.bias"].copy()
        gpu["grad.fc.bias"][3] = np.nan
        rows = {r["name"]: r for r in gc.compare_step(gpu, cpu, init, opt)}
        self.assertTrue(gc.row_fails(rows["output"]))
        self.assertIn("missing", rows["output"]["note"])
        self.assertTrue(gc.row_fails(rows["bn.num_batches_tracked"]))
        self.assertTrue(gc.row_fails(rows["grad.fc.bias"]))
        shape = dict(gpu, loss=np.zeros((1,), np.float32))
        rows = {r["name"]: r for r in gc.compare_step(shape, cpu, init, opt)}
        self.assertTrue(gc.row_fails(rows["loss"]))

    def test_adam_tiny_gradient_is_explained_by_the_gradient(self):
        init, cpu, opt = synthetic_step(ADAM)
        g = cpu["grad.fc.bias"].copy()
        g[5] = 1e-9  # |g| ~ eps: Adam's first step moves this weight by about lr / 2
        cpu["grad.fc.bias"] = g
        for key, value in gc.first_update(opt, init["fc.bias"], g).items():
            cpu["fc.bias" if key == "param" else f"fc.bias.{key}"] = value.astype(np.float32)
        gpu = perturbed(init, cpu, opt, 0)
        g2 = g.copy()
        g2[5] = -1e-9  # the GPU's gradient differs by 2e-9, far within 1e-4 of max|g|
        gpu["grad.fc.bias"] = g2
        for key, value in gc.first_update(opt, init["fc.bias"], g2).items():
            gpu["fc.bias" if key == "param" else f"fc.bias.{key}"] = value.astype(np.float32)
        rows = {r["name"]: r for r in gc.compare_step(gpu, cpu, init, opt)}
        self.assertGreater(rows["fc.bias"]["strict"], 1)  # the plain criterion fails
        self.assertFalse(gc.row_fails(rows["fc.bias"]))   # the gradients explain it
        self.assertEqual(failures(rows.values()), [])
        # The same weights with the CPU's gradient on the GPU side are not explained.
        gpu["grad.fc.bias"] = g
        self.assertIn("fc.bias", failures(gc.compare_step(gpu, cpu, init, opt)))

    def test_allowances_widen_only_their_tensors(self):
        init, cpu, opt = synthetic_step(SGD)
        gpu = perturbed(init, cpu, opt, 0)
        gpu["output"] = cpu["output"] + np.float32(5e-4 * gc.max_abs(cpu["output"]))
        self.assertIn("output", failures(gc.compare_step(gpu, cpu, init, opt)))
        noise = {"output": 1e-3 * gc.max_abs(cpu["output"])}
        self.assertEqual(failures(gc.compare_step(gpu, cpu, init, opt, noise=noise)), [])
        g = gpu["grad.fc.weight"].copy()
        g[0, 0] += 0.05 * gc.max_abs(g)  # one ReLU flip's worth
        gpu["grad.fc.weight"] = g
        for key, value in gc.first_update(opt, init["fc.weight"], g).items():
            gpu["fc.weight" if key == "param" else f"fc.weight.{key}"] = value.astype(np.float32)
        self.assertIn("grad.fc.weight", failures(gc.compare_step(gpu, cpu, init, opt, noise=noise)))
        slack = {"grad.fc.weight": np.zeros(g.shape)}
        slack["grad.fc.weight"][0, 0] = 0.1 * gc.max_abs(g)
        rows = gc.compare_step(gpu, cpu, init, opt, noise=noise, slack=slack)
        self.assertEqual(failures(rows), [])

    def test_bits(self):
        a, b = os.path.join(self.dir, "a.safetensors"), os.path.join(self.dir, "b.safetensors")
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        gc.write_safetensors(a, {"x": x, "n": np.ones((), np.int64)})
        gc.write_safetensors(b, {"x": x.copy(), "n": np.ones((), np.int64)})
        self.assertIsNone(gc.compare_bits(a, b))
        y = x.copy()
        y.view(np.uint32)[1, 1] ^= 1  # one bit of one float
        gc.write_safetensors(b, {"x": y, "n": np.ones((), np.int64)})
        diff = gc.compare_bits(a, b)
        self.assertIn("'x'", diff)
        self.assertIn("1 of 12 elements differ", diff)
        gc.write_safetensors(b, {"x": x})
        self.assertIn("names differ", gc.compare_bits(a, b))

    def test_safetensors_round_trip(self):
        path = os.path.join(self.dir, "t.safetensors")
        tensors = {"f": np.linspace(-1, 1, 7, dtype=np.float32), "i": np.arange(3, dtype=np.int64),
                   "s": np.float32(3.5).reshape(()), "e": np.zeros((0, 4), np.float32)}
        gc.write_safetensors(path, tensors)
        back = gc.read_safetensors(path)
        self.assertEqual(sorted(back), sorted(tensors))
        for k in tensors:
            self.assertEqual(back[k].dtype, tensors[k].dtype)
            np.testing.assert_array_equal(back[k], tensors[k])
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            self.assertEqual((8 + n) % 8, 0)


class Rules(unittest.TestCase):
    def test_optimizer_parser(self):
        kind, o = gc.parse_optimizer(SGD)
        self.assertEqual((kind, o["lr"], o["momentum"], o["weight_decay"], o["nesterov"]),
                         ("sgd", 0.1, 0.9, 0.0005, False))
        kind, o = gc.parse_optimizer(ADAM)
        self.assertEqual((kind, o["eps"], o["beta2"]), ("adam", 1e-8, 0.999))
        with self.assertRaises(ValueError):
            gc.parse_optimizer("#cairn.lamb<lr = 1.0>")

    def test_first_update_matches_pytorch_formulas(self):
        p, g = np.array([1.0, -2.0]), np.array([0.5, 0.25])
        out = gc.first_update(gc.parse_optimizer(SGD), p, g)
        d = g + 0.0005 * p
        np.testing.assert_allclose(out["momentum_buffer"], d)
        np.testing.assert_allclose(out["param"], p - 0.1 * d)
        nesterov = gc.first_update(("sgd", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), p, g)
        np.testing.assert_allclose(nesterov["param"], p - 0.1 * (g + 0.9 * g))
        plain = gc.first_update(("sgd", {"lr": 0.1, "momentum": 0.0}), p, g)
        self.assertNotIn("momentum_buffer", plain)
        adam = gc.first_update(gc.parse_optimizer(ADAM), p, g)
        np.testing.assert_allclose(adam["param"], p - 0.001 * g / (np.abs(g) + 1e-8), rtol=1e-12)
        np.testing.assert_allclose(adam["exp_avg_sq"], 0.001 * g * g)

    def test_memory_rules(self):
        good = {"backend": "cuda", "planned_arena_bytes": 1000, "measured_peak_bytes": 990,
                "device_arena_bytes": 1024, "device_overhead_bytes": 500 << 20}
        self.assertEqual(gc.check_memory(good, plan=1000), [])
        self.assertEqual(len(gc.check_memory(dict(good, device_arena_bytes=1000), 1000)), 1)
        self.assertEqual(len(gc.check_memory(dict(good, measured_peak_bytes=1001), 1000)), 1)
        self.assertEqual(len(gc.check_memory(good, plan=2048)), 1)
        self.assertEqual(len(gc.check_memory(dict(good, backend="cpu"), 1000)), 1)
        self.assertEqual(gc.check_memory(dict(good, device_arena_bytes=256, planned_arena_bytes=8,
                                              measured_peak_bytes=8)), [])
        cpu = {"backend": "cpu", "planned_arena_bytes": 1000, "measured_peak_bytes": 1000,
               "device_arena_bytes": None, "device_overhead_bytes": None}
        self.assertEqual(gc.check_memory(cpu, 1000, gpu=False), [])
        self.assertEqual(gc.compare_overhead(good, good), (True, "identical"))
        ok, text = gc.compare_overhead(good, dict(good, device_overhead_bytes=502 << 20))
        self.assertTrue(ok, text)
        ok, text = gc.compare_overhead(good, dict(good, device_overhead_bytes=(503 << 20)))
        self.assertFalse(ok, text)
        self.assertIn("+3.00 MiB", text)

    def test_batch_is_check_step_agreements(self):
        inputs = [{"name": "image", "dtype": "f32", "shape": [8, 3, 32, 32]},
                  {"name": "label", "dtype": "i64", "shape": [8]}]
        batch = gc.make_batch(inputs)
        rng = np.random.default_rng(0)  # check_step_agreement.py's draws, in its order
        np.testing.assert_array_equal(batch["image"],
                                      rng.standard_normal((8, 3, 32, 32), dtype=np.float32))
        np.testing.assert_array_equal(batch["label"], rng.integers(0, 10, 8, dtype=np.int64))
        self.assertEqual(batch["label"].dtype, np.int64)

    def test_images_and_idx(self):
        images = np.arange(2 * 28 * 28, dtype=np.uint32).astype(np.uint8).reshape(2, 28, 28)
        out = gc.shaped_images(images, (3, 32, 32))
        self.assertEqual(out.shape, (2, 3, 32, 32))
        for c in range(3):
            np.testing.assert_array_equal(out[:, c, 2:30, 2:30], images)
        self.assertEqual(int(out[:, :, :2].sum()) + int(out[:, :, 30:].sum()), 0)
        self.assertEqual(gc.shaped_images(images, (1, 28, 28)).shape, (2, 1, 28, 28))
        with tempfile.TemporaryDirectory() as d:
            labels = np.array([3, 7], np.uint8)
            for split in ("train", "test"):
                names = gc.FASHION_FILES[split]
                with gzip.open(os.path.join(d, names[0]), "wb") as f:
                    f.write(struct.pack(">IIII", 0x803, 2, 28, 28) + images.tobytes())
                with gzip.open(os.path.join(d, names[1]), "wb") as f:
                    f.write(struct.pack(">II", 0x801, 2) + labels.tobytes())
            np.testing.assert_array_equal(gc.read_idx(os.path.join(d, names[0])), images)
            work = os.path.join(d, "work")
            self.assertEqual(gc.data_dir(d, work, (1, 28, 28)), d)  # read as it is
            folder = gc.data_dir(d, work, (3, 32, 32))
            np.testing.assert_array_equal(np.load(os.path.join(folder, "train_images.npy")), out)
            np.testing.assert_array_equal(np.load(os.path.join(folder, "test_labels.npy")), labels)
            small = gc.data_dir(d, work, (1, 28, 28), train=1, test=1)
            self.assertEqual(np.load(os.path.join(small, "train_images.npy")).shape, (1, 1, 28, 28))


class Report(unittest.TestCase):
    def test_report(self):
        import run_gpu_suite as suite_module
        with tempfile.TemporaryDirectory() as d:
            args = suite_module.argparse.Namespace(out=d, checks="bd", host_run=False,
                                                   time_budget=0)
            suite = suite_module.Suite(args)
            suite.machine = ["GPU: Test GPU"]
            suite.add("b", "mlp", "PASS", "worst 1e-6")
            suite.add("d", "mlp", "FAIL", "overhead grew", "device_overhead_bytes differs")
            with open(suite.report_path) as f:
                text = f.read()
            self.assertIn("gpu-suite-", os.path.basename(suite.report_path))
            self.assertIn("-bd.md", suite.report_path)
            self.assertIn("| mlp | PASS | worst 1e-6 |", text)
            self.assertIn("| mlp | FAIL | overhead grew |", text)
            self.assertIn("1 PASS, 1 FAIL, 0 SKIP", text)
            self.assertIn("device_overhead_bytes differs", text)
            with open(suite.json_path) as f:
                data = json.load(f)
            self.assertEqual([r["status"] for r in data["results"]], ["PASS", "FAIL"])


def write_exe(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class NoGpu(unittest.TestCase):
    def suite(self, out, env, *extra):
        cmd = [sys.executable, os.path.join(HERE, "run_gpu_suite.py"), "--out", out] + list(extra)
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)

    def test_exit_77_without_nvidia_smi(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, CAIRN_NVIDIA_SMI=os.path.join(d, "nvidia-smi-absent"))
            proc = self.suite(d, env, "--bundle", os.path.join(d, "no-bundle"))
            self.assertEqual(proc.returncode, 77, proc.stdout + proc.stderr)
            self.assertIn("no GPU: nvidia-smi not found", proc.stdout)
            report = [f for f in os.listdir(d) if f.endswith(".md")]
            self.assertEqual(len(report), 1)
            with open(os.path.join(d, report[0])) as f:
                self.assertIn("nothing checked", f.read())

    def test_exit_77_when_the_executable_finds_no_device(self):
        """nvidia-smi lists a GPU, the CUDA executable says there is none (no driver)."""
        with tempfile.TemporaryDirectory() as d:
            smi = os.path.join(d, "nvidia-smi")
            write_exe(smi, "#!/bin/sh\n"
                      "if [ \"$1\" = \"\" ]; then echo '| NVIDIA-SMI 580.1  CUDA Version: 13.0 |'; "
                      "else echo 'Fake GPU, 580.1, 81559 MiB, 9.0'; fi\n")
            bundle = os.path.join(d, "bundle")
            os.makedirs(bundle)
            payload = os.path.join(bundle, "payload.tar.xz")
            exe = ("#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then\n"
                   "  echo 'toy: model Toy, CUDA runtime 13.0'; exit 0\nfi\n"
                   "echo 'error: no CUDA device: this executable was built with --target cuda "
                   "(cudaGetDeviceCount: CUDA driver version is insufficient)' >&2\nexit 1\n")
            with tarfile.open(payload, "w:xz") as tar:
                for name in ("bin/toy", "bin/toy-noreuse", "bin/cpu/toy-b4"):
                    info = tarfile.TarInfo(name)
                    info.size, info.mode = len(exe), 0o755
                    tar.addfile(info, io.BytesIO(exe.encode()))
                info = tarfile.TarInfo("lib")
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            manifest = {
                "commit": "test", "date": "today", "cairn": "cairn test", "target": "cuda",
                "built_on": "here", "init_seed": 1, "step_seed": 5,
                "payload": {"sha256": gc.sha256_file(payload)}, "kernel_tests": None, "bench": {},
                "models": {"toy": {"source": "examples/toy.cairn", "batch": 4, "agree_batch": 4,
                                   "image_shape": [1, 28, 28], "optimizer": SGD,
                                   "inputs": [], "agree_inputs": [],
                                   "exe": {"normal": "bin/toy", "noreuse": "bin/toy-noreuse",
                                           "agree": "bin/toy", "cpu_agree": "bin/cpu/toy-b4"},
                                   "plan": {"normal": {"arena_bytes": 1024}}}}}
            with open(os.path.join(bundle, "MANIFEST.json"), "w") as f:
                json.dump(manifest, f)
            env = dict(os.environ, CAIRN_NVIDIA_SMI=smi)
            out = os.path.join(d, "out")
            proc = self.suite(out, env, "--bundle", bundle, "--work", os.path.join(d, "work"),
                              "--checks", "d")
            self.assertEqual(proc.returncode, 77, proc.stdout + proc.stderr)
            self.assertIn("no CUDA device", proc.stdout)
            # A changed payload is refused before anything runs.
            with open(payload, "ab") as f:
                f.write(b"x")
            proc = self.suite(out, env, "--bundle", bundle, "--work", os.path.join(d, "work2"))
            self.assertEqual(proc.returncode, 1)
            self.assertIn("SHA-256", proc.stderr)


if __name__ == "__main__":
    unittest.main()
