"""What the GPU suite (run_gpu_suite.py) and the GPU benchmark (bench/gpu/bench.py) share, with
the Python standard library and numpy only: safetensors in numpy, the tensor comparisons of
the suite, the first optimizer step in float64, the bundle (its manifest and its packed
executables), the machine (GPU, CUDA libraries, compute-sanitizer), the data sets the
executables read, and commands run with their output kept.

scripts/gpu-bundle.sh copies this file to the root of the bundle and calls it here, on the
machine that builds the bundle, for the pieces written in Python:

  python3 gpu_common.py make-batch --check-json CHECK.json --out BATCH.safetensors
      a random batch for `EXE step` shaped like the model's inputs, drawn as
      test/reference/check_step_agreement.py draws its batches (numpy default_rng(0):
      float inputs standard normal, labels uniform in [0, 10))
  python3 gpu_common.py summarize-step --out STEP.safetensors
      the names, dtypes, shapes and max |x| of the tensors `EXE step` wrote, as JSON
  python3 gpu_common.py plan-summary --report PLAN.json
      the device summary of a `--memory-report` JSON file (arena, lower bound, no reuse)
"""
import argparse
import glob
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import time

import numpy as np

TINY = 1e-30
TOLERANCE = 1e-4

# safetensors dtype names and their numpy dtypes (BF16 is read as its raw uint16 bits).
ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16,
             "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
             "U8": np.uint8, "BOOL": np.bool_}
NP_TO_ST = {np.dtype(np.float64): "F64", np.dtype(np.float32): "F32",
            np.dtype(np.float16): "F16", np.dtype(np.int64): "I64", np.dtype(np.int32): "I32",
            np.dtype(np.int16): "I16", np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8",
            np.dtype(np.bool_): "BOOL"}
FLOAT_ST = {"F64", "F32", "F16", "BF16"}


# ---------------------------------------------------------------------------------------------
# safetensors


def read_safetensors_raw(path):
    """{name: (dtype name, shape tuple, bytes)} of a safetensors file, in file order."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file ({len(data)} bytes)")
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    body = data[8 + size:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], tuple(info["shape"]), body[begin:end])
    return tensors


def read_safetensors(path):
    """{name: numpy array} of a safetensors file (BF16 as float32)."""
    tensors = {}
    for name, (dtype, shape, blob) in read_safetensors_raw(path).items():
        if dtype not in ST_DTYPES:
            raise ValueError(f"{path}: tensor '{name}' has dtype {dtype}, unknown here")
        array = np.frombuffer(blob, dtype=np.dtype(ST_DTYPES[dtype]).newbyteorder("<"))
        if dtype == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array.reshape(shape)
    return tensors


def write_safetensors(path, tensors):
    """Writes {name: numpy array} as safetensors (little-endian, tensors in name order)."""
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        if array.dtype not in NP_TO_ST:
            raise ValueError(f"tensor '{name}': dtype {array.dtype} cannot be written")
        blob = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": NP_TO_ST[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(tmp, path)


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# Comparisons


def max_abs(array):
    return float(np.max(np.abs(array.astype(np.float64)))) if array.size else 0.0


def compare_bits(reference_path, other_path):
    """None when the two safetensors files hold the same tensors with the same bytes, else
    a sentence naming the first difference (and, for floats, the largest |difference|)."""
    ref, got = read_safetensors_raw(reference_path), read_safetensors_raw(other_path)
    if ref.keys() != got.keys():
        missing, extra = sorted(ref.keys() - got.keys()), sorted(got.keys() - ref.keys())
        return f"tensor names differ (missing {missing[:5]}, extra {extra[:5]})"
    different = [n for n in sorted(ref) if ref[n] != got[n]]
    if not different:
        return None
    name = different[0]
    (dtype, shape, a), (dtype2, shape2, b) = ref[name], got[name]
    if (dtype, shape) != (dtype2, shape2):
        return f"'{name}': {dtype}{list(shape)} against {dtype2}{list(shape2)}"
    note = ""
    if dtype in ("F32", "F64"):
        x = np.frombuffer(a, dtype=ST_DTYPES[dtype]).astype(np.float64)
        y = np.frombuffer(b, dtype=ST_DTYPES[dtype]).astype(np.float64)
        both = np.isfinite(x) & np.isfinite(y)
        note = (f", max |difference| {np.max(np.abs(x[both] - y[both])) if both.any() else 0:.3g}"
                f", {int(np.sum(x.view(np.int64) != y.view(np.int64)))} of {x.size} "
                f"elements differ")
    return f"{len(different)} of {len(ref)} tensors differ, first '{name}'{note}"


def parse_optimizer(text):
    """('sgd' | 'adam', {field: value}) from `cairn check --json`'s optimizer, e.g.
    '#cairn.sgd<lr = 0.05, momentum = 0.9, dampening = 0.0, weight_decay = 0.0,
    nesterov = false>'."""
    match = re.fullmatch(r"\s*#cairn\.(\w+)<(.*)>\s*", text or "")
    if not match:
        raise ValueError(f"cannot read the optimizer '{text}'")
    kind, fields = match.group(1), {}
    for part in match.group(2).split(","):
        key, _, value = part.partition("=")
        value = value.strip()
        fields[key.strip()] = (value == "true") if value in ("true", "false") else float(value)
    if kind not in ("sgd", "adam"):
        raise ValueError(f"optimizer '{kind}' is not SGD or Adam")
    return kind, fields


def first_update(optimizer, param, grad):
    """The first optimizer step from zero state, in float64, as runtime/kernels/Optimizer.h
    (PyTorch's SGD and Adam): {"param": new value, "<state>": state} (state names as in the
    checkpoint: momentum_buffer; exp_avg, exp_avg_sq)."""
    kind, o = optimizer
    p, g = param.astype(np.float64), grad.astype(np.float64)
    g = g + o.get("weight_decay", 0.0) * p
    if kind == "sgd":
        out = {}
        momentum = o.get("momentum", 0.0)
        if momentum:
            buf = g  # the first step: buf = g, no dampening
            out["momentum_buffer"] = buf
            g = g + momentum * buf if o.get("nesterov", False) else buf
        out["param"] = p - o["lr"] * g
        return out
    b1, b2 = o.get("beta1", 0.9), o.get("beta2", 0.999)
    m, v = (1 - b1) * g, (1 - b2) * g * g
    step = o["lr"] / (1 - b1) * m / (np.sqrt(v) / math.sqrt(1 - b2) + o.get("eps", 1e-8))
    return {"param": p - step, "exp_avg": m, "exp_avg_sq": v}


def step_roles(init, cpu):
    """(params with a gradient, {state tensor name: (param, state)}) of a step's output."""
    params = [n for n in init if "grad." + n in cpu]
    state = {}
    for p in params:
        for s in ("momentum_buffer", "exp_avg", "exp_avg_sq"):
            if f"{p}.{s}" in cpu:
                state[f"{p}.{s}"] = (p, s)
    return params, state


def compare_step(gpu, cpu, init, optimizer, tolerance=TOLERANCE, noise=None, slack=None):
    """Compares two `EXE step` outputs (dicts of numpy arrays) from the same weights `init`
    and batch, `gpu` against the reference `cpu`. Returns rows
    {"name", "kind", "error", "allowed", "strict", "note"}, the worst first (error and
    allowed relative to max|reference| of the tensor; a row fails when error > allowed;
    "strict" is max|gpu - cpu| / (tolerance * max|cpu|), the plain criterion).

    kinds:
      "agree"  every tensor of both files: max|gpu - cpu| / max|cpu| <= tolerance, less
               the per-element allowances: `slack` ({name: array}, e.g. ReLU inputs within
               rounding of 0 that may take either derivative) and, for what the optimizer
               wrote (params, their state), |U(g_gpu) - U(g_cpu)| elementwise, U the first
               optimizer step in float64: the part of the difference that the gradients'
               accepted difference explains (Adam's first step turns a tiny gradient
               difference into up to 2 lr where |g| ~ eps); `noise` ({name: absolute
               error}, e.g. 10x PyTorch float32's own error against float64) raises the
               allowed error of tensors that are rounding noise in any float32 code;
               integer tensors must be equal.
      "rule"   "delta.<param>": the GPU's update (new - initial weights) against U applied to
               the GPU's own gradients, relative to max|U - initial|, allowed the larger of
               the tolerance and 2 ulps of the weights (the new weights are float32 values
               at the weights' scale); and each optimizer state tensor against U's, relative
               to its max.
    """
    noise, slack = noise or {}, slack or {}
    rows = []
    params, state = step_roles(init, cpu)
    updates = {}
    for p in params:
        if "grad." + p in gpu and p in init:
            updates[p] = (first_update(optimizer, init[p], gpu["grad." + p]),
                          first_update(optimizer, init[p], cpu["grad." + p]))
    for name in sorted(set(gpu) | set(cpu)):
        if name not in gpu or name not in cpu:
            rows.append(_row(name, "agree", math.inf, tolerance, math.inf,
                             "missing in the GPU's output" if name not in gpu
                             else "missing in the CPU's output"))
            continue
        a, b = gpu[name], cpu[name]
        if a.shape != b.shape or (a.dtype.kind == "f") != (b.dtype.kind == "f"):
            rows.append(_row(name, "agree", math.inf, tolerance, math.inf,
                             f"{a.dtype}{list(a.shape)} against {b.dtype}{list(b.shape)}"))
            continue
        if b.dtype.kind != "f":
            wrong = int(np.sum(a != b))
            rows.append(_row(name, "agree", math.inf if wrong else 0.0, tolerance,
                             math.inf if wrong else 0.0,
                             f"{wrong} of {b.size} integers differ" if wrong else "integers equal"))
            continue
        scale = max(max_abs(b), TINY)
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        raw = float(np.max(diff)) if diff.size else 0.0
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            rows.append(_row(name, "agree", math.inf, tolerance, math.inf,
                             "not finite: " + ("GPU" if not np.all(np.isfinite(a)) else "CPU")))
            continue
        allowance = np.zeros_like(diff)
        notes = []
        if name in slack:
            allowance = allowance + np.asarray(slack[name], dtype=np.float64).reshape(diff.shape)
            notes.append("ReLU-tie slack")
        owner = name if name in updates else (state[name] if name in state else None)
        if owner is not None:
            pname, key = (name, "param") if name in updates else owner
            u_gpu, u_cpu = updates[pname]
            allowance = allowance + np.abs(u_gpu[key] - u_cpu[key]).reshape(diff.shape)
            notes.append("less the gradients' effect")
        error = float(np.max(np.maximum(diff - allowance, 0))) if diff.size else 0.0
        allowed = max(tolerance * scale, noise.get(name, 0.0))
        if noise.get(name, 0.0) > tolerance * scale:
            notes.append("noise allowance")
        rows.append(_row(name, "agree", error / scale, allowed / scale, raw / (tolerance * scale),
                         f"max|diff| {raw:.3g}, max|cpu| {scale:.3g}"
                         + (f" ({', '.join(notes)})" if notes else "")))
    for p, (u_gpu, _) in updates.items():
        if p not in gpu:
            continue
        delta_want = u_gpu["param"] - init[p].astype(np.float64)
        delta_got = gpu[p].astype(np.float64) - init[p].astype(np.float64)
        scale = max(max_abs(delta_want), TINY)
        err = float(np.max(np.abs(delta_got - delta_want))) if delta_want.size else 0.0
        allowed = max(tolerance * scale, 2.0 ** -22 * max_abs(init[p]))
        rows.append(_row("delta." + p, "rule", err / scale, allowed / scale,
                         err / (tolerance * scale),
                         f"max|diff| {err:.3g}, max|update| {scale:.3g}"))
        for s in ("momentum_buffer", "exp_avg", "exp_avg_sq"):
            key = f"{p}.{s}"
            if s in u_gpu and key in gpu:
                want = u_gpu[s]
                scale = max(max_abs(want), TINY)
                got = gpu[key].astype(np.float64)
                err = float(np.max(np.abs(got - want))) if want.size else 0.0
                rows.append(_row("rule:" + key, "rule", err / scale, tolerance,
                                 err / (tolerance * scale),
                                 f"max|diff| {err:.3g}, max|want| {scale:.3g}"))
    rows.sort(key=lambda r: -(r["error"] / r["allowed"]) if r["allowed"] else -math.inf)
    return rows


def _row(name, kind, error, allowed, strict, note):
    return {"name": name, "kind": kind, "error": error, "allowed": allowed, "strict": strict,
            "note": note}


def row_fails(row):
    return not (row["error"] <= row["allowed"])


def check_memory(metrics, plan=None, gpu=True):
    """Problems with one `train --metrics` JSON object of a CUDA executable (gpu=True) or
    of a CPU one: the device arena is the planned size rounded up to 256 bytes (at least
    256), the arena's measured high-water mark is within the plan, and the planned size is
    the one the build's memory report gave (`plan`: its arena_bytes), when given."""
    problems = []
    planned = metrics.get("planned_arena_bytes")
    peak = metrics.get("measured_peak_bytes")
    if not isinstance(planned, int) or planned <= 0:
        return [f"planned_arena_bytes is {planned!r}"]
    if plan is not None and planned != plan:
        problems.append(f"planned_arena_bytes {planned} is not the build's memory report's "
                        f"arena_bytes {plan}")
    if not isinstance(peak, int) or peak > planned:
        problems.append(f"measured_peak_bytes {peak!r} exceeds planned_arena_bytes {planned}")
    if gpu:
        want = max(256, (planned + 255) // 256 * 256)
        if metrics.get("backend") != "cuda":
            problems.append(f"backend is {metrics.get('backend')!r}, not 'cuda'")
        if metrics.get("device_arena_bytes") != want:
            problems.append(f"device_arena_bytes {metrics.get('device_arena_bytes')!r} is not "
                            f"planned_arena_bytes rounded up to 256 ({want})")
        if not isinstance(metrics.get("device_overhead_bytes"), int):
            problems.append(f"device_overhead_bytes is {metrics.get('device_overhead_bytes')!r}")
    return problems


OVERHEAD_SLACK = 2 << 20


def compare_overhead(short, long):
    """(ok, sentence) for the device overhead of a short and a long run: equal, or within
    2 MiB (cudaMemGetInfo counts the driver's pages, and the driver may grow an internal
    pool by one 2 MiB page at any point; an allocation per step would grow it by the
    step's size times the steps in between)."""
    a, b = short.get("device_overhead_bytes"), long.get("device_overhead_bytes")
    if not isinstance(a, int) or not isinstance(b, int):
        return False, f"device_overhead_bytes missing ({a!r}, {b!r})"
    delta = b - a
    if delta == 0:
        return True, "identical"
    ok = abs(delta) <= OVERHEAD_SLACK
    return ok, (f"differs by {delta:+d} bytes ({delta / 2**20:+.2f} MiB), "
                f"{'within' if ok else 'beyond'} the 2 MiB of one driver page")


# ---------------------------------------------------------------------------------------------
# The bundle


class Bundle:
    """A folder made by scripts/gpu-bundle.sh: MANIFEST.json, payload.tar.xz (the
    executables and the CPU executables' libraries), data/, reference/, examples/."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        manifest = os.path.join(self.root, "MANIFEST.json")
        if not os.path.isfile(manifest):
            raise FileNotFoundError(f"{self.root}: no MANIFEST.json; make the bundle with "
                                    f"`bash scripts/gpu-bundle.sh` first")
        with open(manifest, "rb") as f:
            text = f.read()
        self.manifest = json.loads(text)
        # Names this bundle's files under a scratch folder: what is made from one bundle
        # (unpacked executables, data, initial weights) is never taken for another's.
        self.key = hashlib.sha256(text).hexdigest()[:12]
        self.unpacked = None

    def unpack(self, work):
        """Unpacks payload.tar.xz under `work` once (kept while its digest matches);
        returns the folder holding bin/ and lib/."""
        payload = os.path.join(self.root, "payload.tar.xz")
        target = os.path.join(work, "payload")
        stamp = os.path.join(target, ".sha256")
        want = self.manifest["payload"]["sha256"]
        if os.path.isfile(stamp) and open(stamp).read().strip() == want:
            self.unpacked = target
            return target
        if sha256_file(payload) != want:
            raise RuntimeError(f"{payload}: its SHA-256 is not the manifest's: the bundle is "
                               f"incomplete or was changed")
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        with tarfile.open(payload, "r:xz") as tar:
            for member in tar.getmembers():
                if member.name.startswith("/") or ".." in member.name.split("/"):
                    raise RuntimeError(f"{payload}: unsafe path {member.name!r}")
            if hasattr(tarfile, "data_filter"):  # Python 3.12 and the backports
                tar.extractall(target, filter="data")
            else:
                tar.extractall(target)
        with open(stamp, "w") as f:
            f.write(want + "\n")
        self.unpacked = target
        return target

    def exe(self, relative):
        if self.unpacked is None:
            raise RuntimeError("the bundle is not unpacked")
        return os.path.join(self.unpacked, relative)

    @property
    def lib_dir(self):
        return os.path.join(self.unpacked, "lib")

    def models(self):
        return list(self.manifest["models"])

    def model(self, name):
        return self.manifest["models"][name]

    def path(self, *parts):
        return os.path.join(self.root, *parts)


# ---------------------------------------------------------------------------------------------
# The machine


def find_nvidia_smi():
    override = os.environ.get("CAIRN_NVIDIA_SMI")
    if override is not None:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    found = shutil.which("nvidia-smi")
    if found:
        return found
    for candidate in ("/usr/bin/nvidia-smi", "/usr/local/nvidia/bin/nvidia-smi",
                      "/usr/local/cuda/bin/nvidia-smi"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def gpu_info():
    """(info dict, None) for the first GPU nvidia-smi lists, or (None, why there is none)."""
    smi = find_nvidia_smi()
    if not smi:
        return None, "nvidia-smi not found (no NVIDIA driver on this machine)"
    for fields in ("name,driver_version,memory.total,compute_cap",
                   "name,driver_version,memory.total"):  # compute_cap: drivers from 510 on
        try:
            query = subprocess.run([smi, "--query-gpu=" + fields, "--format=csv,noheader"],
                                   capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"{smi} failed: {e}"
        if query.returncode == 0:
            break
    lines = [l.strip() for l in query.stdout.splitlines() if l.strip()]
    if query.returncode != 0 or not lines:
        return None, (f"{smi} lists no GPU (exit {query.returncode}: "
                      f"{(query.stdout + query.stderr).strip()[-300:]})")
    fields = [f.strip() for f in lines[0].split(",")]
    info = {"name": fields[0], "driver": fields[1] if len(fields) > 1 else "?",
            "memory": fields[2] if len(fields) > 2 else "?",
            "compute_capability": fields[3] if len(fields) > 3 else "?",
            "count": len(lines), "nvidia_smi": smi}
    try:
        header = subprocess.run([smi], capture_output=True, text=True, timeout=60).stdout
        match = re.search(r"CUDA Version:\s*([\d.]+)", header)
        info["driver_cuda"] = match.group(1) if match else "?"
    except (OSError, subprocess.TimeoutExpired):
        info["driver_cuda"] = "?"
    return info, None


NO_DEVICE = re.compile(r"no CUDA device", re.IGNORECASE)


class NoDevice(Exception):
    """An executable said there is no CUDA device."""


def site_library_dirs():
    """Library folders of pip's NVIDIA wheels (nvidia-cudnn-cu13, nvidia-cublas, ...) for
    every Python on the machine we can see: this one's sys.path and the usual venvs."""
    roots = [p for p in sys.path if p and os.path.isdir(p)]
    roots += glob.glob("/opt/*/.venv/lib/python3*/site-packages")
    roots += glob.glob("/usr/local/lib/python3*/dist-packages")
    roots += glob.glob("/usr/lib/python3/dist-packages")
    dirs = []
    for root in roots:
        for pattern in ("nvidia/*/lib", "nvidia/cu13/lib", "nvidia/cu13/lib64"):
            dirs += sorted(glob.glob(os.path.join(root, pattern)))
    return dirs


def library_candidates():
    dirs = [d for d in os.environ.get("CAIRN_CUDA_LIB_DIRS", "").split(":") if d]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
    dirs += sorted(glob.glob("/usr/local/cuda-*/lib64"))
    dirs += ["/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"]
    dirs += site_library_dirs()
    seen, out = set(), []
    for d in dirs:
        if d not in seen and os.path.isdir(d):
            seen.add(d)
            out.append(d)
    return out


def missing_libraries(exe, env):
    """Sonames `ldd exe` cannot find under env."""
    try:
        out = subprocess.run(["ldd", exe], capture_output=True, text=True, env=env,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]


def resolve_libraries(exes, env):
    """Adds to env's LD_LIBRARY_PATH the folders that hold what `ldd` finds missing for any
    of `exes` (the CUDA executables need libcublasLt.so.13 and libcudnn.so.9; on a machine
    with PyTorch from pip they are in its nvidia-* wheels). Returns (env, [(soname, folder)],
    [soname still missing])."""
    env = dict(env)
    found, still = [], []
    for exe in exes:
        for soname in missing_libraries(exe, env):
            if soname in [s for s, _ in found] or soname in still:
                continue
            folder = next((d for d in library_candidates()
                           if os.path.exists(os.path.join(d, soname))), None)
            if folder is None:
                still.append(soname)
                continue
            found.append((soname, folder))
            parts = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
            if folder not in parts:
                env["LD_LIBRARY_PATH"] = ":".join(parts + [folder])
    still = [s for s in still if any(s in missing_libraries(e, env) for e in exes)]
    return env, found, still


def find_compute_sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    patterns = ["/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda-*/bin/compute-sanitizer",
                "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
                "/opt/nvidia/*/compute-sanitizer", "/opt/nvidia/*/*/compute-sanitizer"]
    for pattern in patterns:
        for candidate in sorted(glob.glob(pattern)):
            if os.access(candidate, os.X_OK) and os.path.isfile(candidate):
                return candidate
    return None


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            names = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")]
        return f"{names[0]}, {len(names)} logical cores" if names else "unknown CPU"
    except OSError:
        return "unknown CPU"


# ---------------------------------------------------------------------------------------------
# Data


def read_idx(path):
    """numpy array of an IDX file (plain or .gz)."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    if magic >> 8 != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


FASHION_FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
                 "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}


def fashion_split(fashion_dir, split):
    images, labels = FASHION_FILES[split]
    return (read_idx(os.path.join(fashion_dir, images)),
            read_idx(os.path.join(fashion_dir, labels)))


def shaped_images(images, shape):
    """Fashion-MNIST images [N, 28, 28] as uint8 [N, *shape]: 28x28 as they are; C x H x W
    with H, W >= 28 centred with zero padding and repeated over the C channels (ResNet-18's
    3 x 32 x 32 input)."""
    shape = tuple(shape)
    if int(np.prod(shape)) == 28 * 28:
        return images.reshape((images.shape[0],) + shape)
    if len(shape) != 3 or shape[1] < 28 or shape[2] < 28:
        raise ValueError(f"cannot shape 28x28 Fashion-MNIST images as {list(shape)}")
    c, h, w = shape
    top, left = (h - 28) // 2, (w - 28) // 2
    out = np.zeros((images.shape[0], c, h, w), dtype=np.uint8)
    out[:, :, top:top + 28, left:left + 28] = images[:, None, :, :]
    return out


def data_dir(fashion_dir, work, shape, train=None, test=None):
    """A folder `EXE train --data` reads for a model whose image input is `shape` (without the
    batch): the Fashion-MNIST folder itself for 1x28x28 at full size, else .npy files made
    once under `work` (images shaped by shaped_images; the first `train`/`test` examples
    when given)."""
    shape = tuple(shape)
    if int(np.prod(shape)) == 28 * 28 and train is None and test is None:
        return fashion_dir
    name = "x".join(map(str, shape)) + (f"-{train}-{test}" if train or test else "")
    folder = os.path.join(work, "data", name)
    done = os.path.join(folder, ".done")
    if os.path.isfile(done):
        return folder
    os.makedirs(folder, exist_ok=True)
    for split, count in (("train", train), ("test", test)):
        images, labels = fashion_split(fashion_dir, split)
        if count:
            images, labels = images[:count], labels[:count]
        np.save(os.path.join(folder, f"{split}_images.npy"), shaped_images(images, shape))
        np.save(os.path.join(folder, f"{split}_labels.npy"), labels.astype(np.uint8))
    open(done, "w").close()
    return folder


def make_batch(inputs, seed=0, classes=10):
    """{name: array} for `EXE step --batch`: float inputs standard normal, integer ones
    (labels) uniform in [0, classes), drawn in the order of `inputs` ([{"name", "dtype",
    "shape"}], as `cairn check --json` lists them) from numpy's default_rng(seed), as
    test/reference/check_step_agreement.py draws image then label."""
    rng = np.random.default_rng(seed)
    kinds = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32}
    batch = {}
    for spec in inputs:
        dtype = kinds.get(spec["dtype"])
        if dtype is None:
            raise ValueError(f"input '{spec['name']}' has dtype {spec['dtype']}, which the "
                             f"batch maker does not draw")
        shape = tuple(spec["shape"])
        if np.dtype(dtype).kind == "f":
            batch[spec["name"]] = rng.standard_normal(shape, dtype=np.float32).astype(dtype)
        else:
            batch[spec["name"]] = rng.integers(0, classes, shape, dtype=np.int64).astype(dtype)
    return batch


# ---------------------------------------------------------------------------------------------
# Commands


class Runner:
    """Runs commands, keeps a log of every command with the tail of its output."""

    def __init__(self, log_path=None, env=None, echo=True):
        self.log_path = log_path
        self.env = dict(env if env is not None else os.environ)
        self.echo = echo

    def __call__(self, cmd, timeout=600, env=None, cwd=None, check_device=True):
        """(return code, stdout + stderr, seconds); return code 124 on a timeout."""
        cmd = [str(c) for c in cmd]
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                  timeout=timeout, env=env or self.env, cwd=cwd)
            rc, out = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as e:
            out = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes)
                   else (e.stdout or "")) + f"\n[timed out after {timeout} s]"
            rc = 124
        except OSError as e:
            rc, out = 127, str(e)
        seconds = time.monotonic() - start
        self.log(cmd, rc, out, seconds)
        if check_device and rc != 0 and NO_DEVICE.search(out):
            raise NoDevice(out.strip().splitlines()[-1] if out.strip() else "no CUDA device")
        return rc, out, seconds

    def log(self, cmd, rc, out, seconds):
        text = f"$ {' '.join(cmd)}\n[exit {rc}, {seconds:.1f} s]\n{out[-4000:]}\n"
        if self.echo:
            print(f"  $ {' '.join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))}"
                  f"  -> exit {rc}, {seconds:.1f} s", flush=True)
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write(text + "\n")


def tail(text, lines=12):
    return "\n".join(text.rstrip().splitlines()[-lines:])


def format_bytes(n):
    if not isinstance(n, (int, float)):
        return "-"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "| " + " | ".join("---" for _ in header) + " |"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ")
                                      for c in r) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Bundle-side commands (run by scripts/gpu-bundle.sh)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    mb = sub.add_parser("make-batch")
    mb.add_argument("--check-json", required=True, help="`cairn check --json` output")
    mb.add_argument("--out", required=True)
    mb.add_argument("--seed", type=int, default=0)
    ss = sub.add_parser("summarize-step")
    ss.add_argument("--out", required=True)
    ps = sub.add_parser("plan-summary")
    ps.add_argument("--report", required=True)
    args = ap.parse_args()
    if args.command == "make-batch":
        with open(args.check_json) as f:
            check = json.load(f)
        write_safetensors(args.out, make_batch(check["inputs"], args.seed))
    elif args.command == "summarize-step":
        tensors = read_safetensors(args.out)
        scalar = {n: float(a.reshape(-1)[0]) for n, a in tensors.items()
                  if a.size == 1 and a.dtype.kind == "f"}
        print(json.dumps({n: {"dtype": str(a.dtype), "shape": list(a.shape),
                              "max_abs": max_abs(a) if a.dtype.kind == "f" else None,
                              "value": scalar.get(n)}
                          for n, a in tensors.items()}))
    elif args.command == "plan-summary":
        with open(args.report) as f:
            device = json.load(f)["devices"][0]
        summary = {k: v for k, v in device.items() if k not in ("buffers", "schedule")}
        if "recompute" in summary:  # the names of what is recomputed: a count is enough here
            summary["recompute"] = {k: v for k, v in summary["recompute"].items()
                                    if k != "values"}
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
