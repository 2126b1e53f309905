#!/usr/bin/python3
"""Check one training step of every compiled example against PyTorch, tensor by tensor.

For each example this builds the executable (`cairn build X.cairn -o EXE --batch N`), draws
initial weights with `EXE init --seed 1` (twice: the files must be identical) and checks
them against PyTorch's default initialisers (Linear/Conv2d: |w| <= 1/sqrt(fan_in) and the std
of U(-bound, bound); norms: ones and zeros; other parameters: the std of a fresh PyTorch
model's tensor). It then runs `EXE step` on a random batch and compares, in float32 from the
same weights and batch:
  - PyTorch's forward and backward (dropout replaced by Cairn's Philox masks, stream ids in
    call order, step 0): "output" (eval mode, initial weights), "loss", "grad.<param>" and
    the buffers after the step (BatchNorm running statistics, num_batches_tracked);
  - torch.optim's update (settings from the model's `optimizer` line) applied to Cairn's own
    gradients: every param, the optimizer state ("<param>.momentum_buffer", ".exp_avg",
    ".exp_avg_sq") and "delta.<param>", the update itself (new minus initial weights, a far
    finer check of the update rule than the weights' error). Taking Cairn's gradients keeps
    their accepted rounding out of this check; Adam's first step amplifies it where |g| ~ eps.
A tensor's error is max|cairn - torch| / max|torch|; it passes at <= --tolerance (1e-4), or
where larger: 10x PyTorch float32's own error against float64 (for values that are rounding
noise in any float32 code, like the bias gradient of a convolution followed by BatchNorm,
zero in exact arithmetic), and 2 ulps of the weights for "delta.<param>". ReLU inputs within
float32's error of 0 (and ReLU6 / hardtanh inputs within it of either bound: MobileNetV2 at
batch 2 has hundreds) may take either derivative in any float32 code (in ResNet-18 at batch 8
one such flip moves a gradient by 5%): each gradient element may also be off by twice the sum
of what flipping each of these inputs alone changes there, and the error is what is left.
Prints the tensor closest to failing per model and a table; exits 1 on any failure or
missing tensor, 77 (skip) when torch is missing.

  /usr/bin/python3 test/reference/check_step_agreement.py --cairn build/bin/cairn \
      --examples examples --work /tmp/step-agreement [--models mlp cnn] [--batch 8]
"""
import argparse
import ast
import contextlib
import copy
import itertools
import json
import math
import os
import re
import struct
import subprocess
import sys
import warnings

import numpy as np

try:
    import torch
    from torch import nn
    import torch.nn.functional as F
except ImportError:  # no torch on this machine: tell ctest to count the test as skipped
    print("check_step_agreement: torch is not installed (apt-get install python3-torch); skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from philox import dropout_keep_mask, dropout_scale  # noqa: E402
from pytorch_models import MODELS, ZOO, ZOO_CHECK_SIZE, ZOO_NAMES, model_file  # noqa: E402

EXAMPLES = ["mlp", "cnn", "resnet18", "transformer", "deep_mlp", "autoencoder"]
# Models of test/codegen/Inputs checked by default too: the ops and layers the examples do
# not use.
LAYERS = ["ops", "activations", "tensors", "schedule", "unet"]
# Checked with --models only (not by default): the zoo (examples/zoo, torchvision's models at
# 224x224; test/CMakeLists.txt runs them as a test of their own), where torchvision is there.
OPTIONAL = list(ZOO_NAMES)
# Batch per example when --batch is not given: the model's own (None) or a small one that
# keeps the check fast; always > 1 so that BatchNorm has batch statistics.
DEFAULT_BATCH = {"mlp": None, "cnn": None, "resnet18": 8, "transformer": 8, "deep_mlp": 8,
                 "autoencoder": 8,
                 "ops": 4, "activations": None,
                 "tensors": None, "schedule": None,
                 "resnet50": 2, "vgg11": 2, "mobilenet_v2": 2, "vit": 4, "unet": 4}
# Optimizer steps the weights `EXE step` loads record (the file's "cairn.optimizer_steps"),
# so that its step is that many steps into the run: the lr schedule, Adam's bias correction.
RESUMED_STEPS = {"schedule": 7}
INIT_SEED, STEP_SEED, DATA_SEED = 1, 5, 0
TINY = 1e-30

ST_DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16,
             "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32, "U8": torch.uint8}


def read_safetensors(path):
    """{name: tensor} of a safetensors file, in file order (no `safetensors` package)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = ST_DTYPES[info["dtype"]]
        if end > begin:
            t = torch.frombuffer(bytearray(body[begin:end]), dtype=dtype)
        else:
            t = torch.empty(0, dtype=dtype)
        tensors[name] = t.reshape(info["shape"])
    return tensors


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} as safetensors, tensors in name order, with `metadata`
    ({str: str}) besides "format"."""
    names = sorted(tensors)
    inv = {v: k for k, v in ST_DTYPES.items()}
    header, offset, blobs = {"__metadata__": {"format": "pt", **(metadata or {})}}, 0, []
    for name in names:
        t = tensors[name].contiguous()
        blob = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": inv[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(cmd, timeout):
    """Runs a command; raises RuntimeError with its stderr when it fails."""
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: {e}") from e
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited with {proc.returncode}\n"
                           f"{(proc.stdout + proc.stderr).rstrip()[-3000:]}")
    return proc.stdout


def cairn_check(cairn, source):
    """`cairn check SOURCE --json`: the model's batch, inputs, parameters."""
    return json.loads(run([cairn, "check", source, "--json"], 300))


def write_inputs(path, batch, summary):
    """The tensors of `batch` that are the model's inputs (`summary`: cairn_check's), to
    `path`: `EXE step` takes exactly those (an autoencoder has no label)."""
    inputs = {i["name"] for i in summary["inputs"]}
    write_safetensors(path, {k: v for k, v in batch.items() if k in inputs})


def build(cairn, source, exe, batch=None):
    cmd = [cairn, "build", source, "-o", exe]
    if batch is not None:
        cmd += ["--batch", batch]
    run(cmd, timeout=1800)


def model_calls(source, keyword):
    """[(name, kwargs)] of the model file's `keyword Name(...)` lines (`clip_grad_norm(...)`:
    name "clip_grad_norm"); the language gives these arguments torch's names and defaults."""
    with open(source) as f:
        text = f.read()
    pattern = (r"^\s*(clip_grad_norm\(.*\))" if keyword == "clip_grad_norm"
               else r"^\s*" + keyword + r"\s+(\w+\(.*\))")
    calls = []
    for match in re.finditer(pattern, text, flags=re.M):
        line = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", match.group(1)))
        call = ast.parse(line, mode="eval").body
        calls.append((call.func.id, {k.arg: ast.literal_eval(k.value) for k in call.keywords}))
    return calls


def make_optimizer(source, params):
    """torch.optim.<Name>(params, **kwargs) from the model file's `optimizer Name(...)` line."""
    calls = model_calls(source, "optimizer")
    if not calls:
        raise RuntimeError(f"{source}: no `optimizer` line")
    name, kwargs = calls[0]
    return getattr(torch.optim, name)(params, **kwargs)


def make_scheduler(source, opt):
    """The model file's `scheduler` lines as torch's: one scheduler, or a LinearLR warm-up
    then another as SequentialLR with the warm-up's total_iters as milestone; None without."""
    calls = model_calls(source, "scheduler")
    made = [getattr(torch.optim.lr_scheduler, name)(opt, **kwargs) for name, kwargs in calls]
    if len(made) < 2:
        return made[0] if made else None
    return torch.optim.lr_scheduler.SequentialLR(opt, made, milestones=[made[0].total_iters])


def make_model_and_optimizer(name, examples):
    """MODELS[name]'s PyTorch twin (built under the caller's seed), its input shape (without
    the batch), and the optimizer of examples/<name>.cairn over its parameters."""
    ctor, in_shape = MODELS[name]
    model = ctor()
    return model, in_shape, make_optimizer(model_file(name, examples), model.parameters())


@contextlib.contextmanager
def philox_dropout(seed, step):
    """Swaps F.dropout (which nn.Dropout calls) for Cairn's Philox mask; training-mode calls
    get stream ids 0, 1, 2, ... in call order, as Cairn numbers its dropout ops."""
    original = F.dropout
    streams = itertools.count()

    def dropout(x, p=0.5, training=True, inplace=False):
        if not training:
            return x
        keep = dropout_keep_mask(x.numel(), p, seed, step, next(streams))
        mask = torch.from_numpy(keep.reshape(tuple(x.shape))).to(x.dtype) * float(dropout_scale(p))
        return x * mask

    F.dropout = dropout
    try:
        yield
    finally:
        F.dropout = original


@contextlib.contextmanager
def traced_relu(calls):
    """Swaps F.relu and F.hardtanh (nn.ReLU6's) for ones that append (input, output, bounds)
    of each call under autograd (the training forward) to `calls`: the points where the
    derivative jumps, (0,) for relu, (min_val, max_val) for hardtanh. In-place calls return a
    new tensor, which the modules use."""
    original_relu, original_hardtanh = F.relu, F.hardtanh

    def relu(x, inplace=False):
        y = original_relu(x)
        if x.requires_grad:
            calls.append((x, y, (0.0,)))
        return y

    def hardtanh(x, min_val=-1.0, max_val=1.0, inplace=False):
        y = original_hardtanh(x, min_val, max_val)
        if x.requires_grad:
            calls.append((x, y, (float(min_val), float(max_val))))
        return y

    F.relu, F.hardtanh = relu, hardtanh
    try:
        yield
    finally:
        F.relu, F.hardtanh = original_relu, original_hardtanh


def check_init(model, weights):
    """Problems with Cairn's initial weights against PyTorch's default initialisers;
    `model` is a freshly initialised PyTorch model of the same example."""
    problems = []
    covered = set()
    for prefix, m in model.named_modules():
        dot = prefix + "." if prefix else ""
        if isinstance(m, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)):
            bound = 1.0 / math.sqrt(m.weight[0].numel())
            for pname, _ in m.named_parameters(recurse=False):
                name = dot + pname
                covered.add(name)
                w = weights[name].double()
                if w.abs().max() > bound * (1 + 1e-6):
                    problems.append(f"init {name}: max |w| {w.abs().max():.6g} exceeds "
                                    f"PyTorch's bound 1/sqrt(fan_in) = {bound:.6g}")
                if w.numel() >= 100:
                    want = bound / math.sqrt(3)
                    if abs(w.std() / want - 1) > 0.2:
                        problems.append(f"init {name}: std {w.std():.6g}, PyTorch's "
                                        f"U(-bound, bound) has {want:.6g}")
        elif isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm)):
            for bname, t in itertools.chain(m.named_parameters(recurse=False),
                                            m.named_buffers(recurse=False)):
                name = dot + bname
                covered.add(name)
                want = 1 if bname in ("weight", "running_var") else 0
                if not torch.all(weights[name] == want):
                    problems.append(f"init {name}: expected all {want}")
        elif isinstance(m, nn.Embedding):  # N(0, 1), the padding row zero
            name = dot + "weight"
            covered.add(name)
            w = weights[name].double()
            pad = m.padding_idx
            if pad is not None and not torch.all(w[pad] == 0):
                problems.append(f"init {name}: row {pad} (padding_idx) is not all 0 "
                                f"as in PyTorch (max |w| there {w[pad].abs().max():.6g})")
            rows = [i for i in range(w.shape[0]) if i != pad]
            if abs(w[rows].std() - 1) > 0.2:
                problems.append(f"init {name}: std {w[rows].std():.6g} outside the padding "
                                f"row, PyTorch's N(0, 1) has 1")
    for name, t in model.state_dict().items():  # e.g. pos_embed: compare with PyTorch's draw
        if name in covered or not t.is_floating_point() or t.numel() < 100:
            continue
        got, want = weights[name].double().std(), t.double().std()
        if abs(got / want - 1) > 0.2:
            problems.append(f"init {name}: std {got:.6g}, a fresh PyTorch model has {want:.6g}")
    return problems


def train_loss(model, image, label):
    """The training loss: the model's own `loss(image, label)` where it has one (a `loss`
    block in its file), else cross_entropy(model(image), label), Cairn's default."""
    if hasattr(model, "loss"):
        return model.loss(image, label)
    return F.cross_entropy(model(image), label)


def torch_step(model, source, batch, seed):
    """PyTorch's forward and backward of `EXE step`, in the model's dtype: "output", "loss",
    "grad.<param>" and the buffers (BatchNorm running statistics) after the step."""
    dtype = next(model.parameters()).dtype
    image = batch["image"].to(dtype)
    expected = {}
    model.eval()
    with torch.no_grad():
        expected["output"] = model(image)
    model.train()
    with philox_dropout(seed, step=0):
        loss = train_loss(model, image, batch["label"])
    loss.backward()
    for _, kwargs in model_calls(source, "clip_grad_norm"):
        torch.nn.utils.clip_grad_norm_(model.parameters(), **kwargs)
    expected["loss"] = loss.detach()
    for pname, p in model.named_parameters():
        expected["grad." + pname] = p.grad.clone()
    expected.update({k: v.clone() for k, v in model.named_buffers()})
    return expected


def torch_update(source, initial, grads, resumed=0):
    """The optimizer update by torch.optim (settings from the model file) from the initial
    weights with the given gradients, as the optimizer's step number `resumed` (0: the first)
    from zero optimizer state, the lr scheduler (if any) stepped as many times:
    {param: new value, "<param>.<state>": optimizer state, "delta.<param>": new minus
    initial, in float64}."""
    names = [n[len("grad."):] for n in grads]
    params = [initial[n].clone().requires_grad_() for n in names]
    for n, p in zip(names, params):
        p.grad = grads["grad." + n].clone()
    opt = make_optimizer(source, params)
    scheduler = make_scheduler(source, opt)
    if resumed:
        with warnings.catch_warnings():  # "lr_scheduler.step() before optimizer.step()"
            warnings.simplefilter("ignore")
            for _ in range(resumed):
                scheduler and scheduler.step()
        for p in params:  # Cairn's state after loading weights without optimizer state
            if isinstance(opt, torch.optim.Adam) or isinstance(opt, torch.optim.AdamW):
                opt.state[p] = {"step": torch.tensor(float(resumed)),
                                "exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
            elif opt.defaults.get("momentum", 0):
                opt.state[p] = {"momentum_buffer": torch.zeros_like(p)}
    opt.step()
    expected = {}
    for n, p in zip(names, params):
        expected[n] = p.detach()
        expected["delta." + n] = p.detach().double() - initial[n].double()
        for key, value in opt.state[p].items():
            if key != "step":
                expected[f"{n}.{key}"] = value
    return expected


def tie_slack(model, batch, seed, ties):
    """{"grad.<param>": per-element slack}: twice the sum over the near-tie ReLU inputs
    `ties` [(call, flat index)] of |change of the gradient| when that one input takes the
    other derivative (the first-order bound of any set of them flipping). The change is the
    gradient at the ReLU's output there, passed back from its input alone."""
    model = copy.deepcopy(model).train()
    calls = []
    with philox_dropout(seed, step=0), traced_relu(calls):
        loss = train_loss(model, batch["image"], batch["label"])
    names, params = zip(*model.named_parameters())
    out_grads = torch.autograd.grad(loss, [y for _, y, _ in calls], retain_graph=True)
    total = [torch.zeros_like(p) for p in params]
    for k, j in ties:
        x = calls[k][0]
        delta = torch.zeros_like(x)
        delta.view(-1)[j] = out_grads[k].reshape(-1)[j]
        change = torch.autograd.grad(x, params, grad_outputs=delta, retain_graph=True,
                                     allow_unused=True)
        for acc, g in zip(total, change):
            if g is not None:
                acc += g.abs()
    return {"grad." + n: 2 * acc.double() for n, acc in zip(names, total)}


def torch_references(model, source, batch, seed):
    """PyTorch's forward and backward in float32, and the slack of each tensor beyond the
    tolerance: (reference, {name: absolute error}, {name: per-element error}, count of
    near-tie ReLU inputs). A ReLU input within 4x float32's error of 0 (float32 against
    float64 at that call) may take either derivative in any float32 code; the per-element
    slack bounds the effect (tie_slack). The absolute slack is 10x the float32 result's
    error against float64 beyond that."""
    calls32, calls64 = [], []
    with traced_relu(calls32):
        ref32 = torch_step(copy.deepcopy(model), source, batch, seed)
    with traced_relu(calls64):
        ref64 = torch_step(copy.deepcopy(model).double(), source, batch, seed)
    ties = []
    for k, ((a, _, bounds), (b, _, _)) in enumerate(zip(calls32, calls64)):
        a, b = a.detach().double(), b.detach()
        threshold = 4 * max_abs(a - b)
        near = torch.zeros(b.shape, dtype=torch.bool)
        for bound in bounds:
            near |= (b - bound).abs() < threshold
        ties += [(k, j) for j in torch.nonzero(near.flatten()).flatten().tolist()]
    del calls32, calls64
    slack = tie_slack(model, batch, seed, ties) if ties else {}
    noise = {}
    for k in ref32:
        diff = (ref64[k] - ref32[k].double()).abs()
        noise[k] = 10 * max_abs((diff - slack[k]).clamp(min=0) if k in slack else diff)
    return ref32, noise, slack, len(ties)


def max_abs(t):
    return float(t.double().abs().max()) if t.numel() else 0.0


def compare(got, ref, noise, tie_slack, initial, tolerance):
    """[(tensor name, error or None when missing, allowed error, note)], closest to failing
    first; the error (beyond the per-element slack) and what is allowed as described at the
    top."""
    rows = []
    for name, want in ref.items():
        have = got.get(name)
        if name.startswith("delta.") and name[len("delta."):] in got:
            pname = name[len("delta."):]
            have = got[pname].double() - initial[pname].double()
        if have is None:
            if not name.startswith("delta."):  # a missing param is reported once
                rows.append((name, None, tolerance, "missing in Cairn's output"))
        elif tuple(have.shape) != tuple(want.shape):
            rows.append((name, math.inf, tolerance,
                         f"shape {list(have.shape)}, expected {list(want.shape)}"))
        elif have.dtype.is_floating_point != want.dtype.is_floating_point:
            rows.append((name, math.inf, tolerance, f"dtype {have.dtype}, expected {want.dtype}"))
        else:
            scale = max(max_abs(want), TINY)
            diff = (have.double() - want.double()).abs()
            raw = max_abs(diff)
            if name in tie_slack:
                diff = (diff - tie_slack[name]).clamp(min=0)
            allowed = max(tolerance * scale, noise[name])
            rows.append((name, max_abs(diff) / scale, allowed / scale,
                         f"max|diff| {raw:.3g}, max|torch| {scale:.3g}"))
    rows.sort(key=lambda r: (r[1] is not None, -(r[1] or 0) / r[2]))  # missing first
    return rows


def check_one(name, args):
    """(batch, worst tensor, worst error, problems) for one example."""
    source = model_file(name, args.examples)
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    if name in ZOO and MODELS[name][1][1] == ZOO_CHECK_SIZE:
        # The file declares 224x224 images; the check runs at ZOO_CHECK_SIZE.
        with open(source) as f:
            text, count = re.subn(r"(input image: f32\[B, 3, )224, 224\]",
                                  rf"\g<1>{ZOO_CHECK_SIZE}, {ZOO_CHECK_SIZE}]", f.read())
        if count != 1:
            raise RuntimeError(f"{source}: no 'input image: f32[B, 3, 224, 224]' line")
        source = os.path.join(work, name + ".cairn")
        with open(source, "w") as f:
            f.write(text)
    exe, w_path = os.path.join(work, name), os.path.join(work, "init.safetensors")
    b_path, out_path = os.path.join(work, "batch.safetensors"), os.path.join(work, "step.safetensors")
    batch_size = args.batch if args.batch is not None else DEFAULT_BATCH[name]
    build(args.cairn, source, exe, batch_size)

    ctor, in_shape = MODELS[name]
    torch.manual_seed(0)
    model = ctor()
    if name in ZOO:
        # torchvision's own weights (its initialisation), loaded into the executable: the
        # state_dict as torchvision writes it is what `EXE step --load` takes. Weight tensors
        # torchvision starts at zero (ViT's head and class token) are drawn instead, or no
        # gradient would reach the layers below them.
        with torch.no_grad():
            for p in model.parameters():
                if p.dim() >= 2 and not p.any():
                    p.normal_(std=0.02)
        weights = {k: v.detach().clone() for k, v in model.state_dict().items()}
        write_safetensors(w_path, weights)
        problems = []
    else:
        run([exe, "init", "--seed", INIT_SEED, "--save", w_path], timeout=600)
        weights = read_safetensors(w_path)
        fresh = copy.deepcopy(model)  # PyTorch's own draw, for the init statistics
        model.load_state_dict(weights, strict=True)
        problems = check_init(fresh, weights)
        again = os.path.join(work, "init-again.safetensors")
        run([exe, "init", "--seed", INIT_SEED, "--save", again], timeout=600)
        with open(w_path, "rb") as a, open(again, "rb") as b:
            if a.read() != b.read():
                problems.append(f"`init --seed {INIT_SEED}` twice gave different files")

    summary = cairn_check(args.cairn, source)
    if batch_size is None:
        batch_size = int(summary["batch"])
    rng = np.random.default_rng(DATA_SEED)
    batch = {"image": torch.from_numpy(rng.standard_normal((batch_size, *in_shape), dtype=np.float32)),
             "label": torch.from_numpy(rng.integers(0, 10, batch_size, dtype=np.int64))}
    write_inputs(b_path, batch, summary)
    resumed = RESUMED_STEPS.get(name, 0)
    load_path = w_path
    if resumed:
        load_path = os.path.join(work, "resumed.safetensors")
        write_safetensors(load_path, weights, {"cairn.optimizer_steps": str(resumed)})
    run([exe, "step", "--load", load_path, "--batch", b_path, "--out", out_path,
         "--seed", STEP_SEED], timeout=900)
    got = read_safetensors(out_path)
    ref, noise, tie_slack, ties = torch_references(model, source, batch, STEP_SEED)
    # The update is checked on Cairn's own gradients (themselves checked above), so that the
    # gradients' rounding, which Adam's first step amplifies where |g| ~ eps, stays out of it.
    grads = {k: got.get(k, v) for k, v in ref.items() if k.startswith("grad.")}
    update = torch_update(source, weights, grads, resumed)
    update64 = torch_update(source, {k: v.double() for k, v in weights.items()},
                            {k: v.double() for k, v in grads.items()}, resumed)
    for k, v in update.items():
        ref[k] = v
        noise[k] = (2.0 ** -22 * max_abs(weights[k[len("delta."):]]) if k.startswith("delta.")
                    else 10 * max_abs(update64[k] - v.double()))
    rows = compare(got, ref, noise, tie_slack, weights, args.tolerance)
    for tname, err, allowed, note in rows:
        if err is None:
            problems.append(f"{tname}: {note}")
        elif err > allowed:
            problems.append(f"{tname}: error {err:.3g} > {allowed:.3g} ({note})")
    extra = sorted(set(got) - set(ref))
    if extra:
        print(f"{name}: note: Cairn also wrote {', '.join(extra[:8])}"
              f"{' ...' if len(extra) > 8 else ''}")
    worst = next((r for r in rows if r[1] is not None), ("-", 0.0, args.tolerance, ""))
    print(f"{name}: batch {batch_size}, {len(rows)} tensors compared, {ties} near-tie ReLU "
          f"inputs; closest to failing: "
          f"{worst[0]}, error {worst[1]:.3g} (allowed {worst[2]:.3g}; {worst[3]})")
    return batch_size, worst, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cairn", default="build/bin/cairn", help="path of the cairn binary")
    ap.add_argument("--examples", default="examples", help="folder of the .cairn examples")
    ap.add_argument("--work", default="/tmp/cairn-step-agreement",
                    help="folder for the executables and tensor files")
    ap.add_argument("--models", nargs="+", default=EXAMPLES + LAYERS,
                    choices=EXAMPLES + LAYERS + OPTIONAL)
    ap.add_argument("--batch", type=int, help="batch for every model (default: per model)")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    absent = [m for m in args.models if m in ZOO_NAMES and m not in ZOO]
    if absent:  # tell ctest to count the test as skipped
        print(f"check_step_agreement: torchvision is not installed (apt-get install "
              f"python3-torchvision); {', '.join(absent)} skipped")
        return 77

    table, details = [], []
    for name in args.models:
        try:
            batch, worst, problems = check_one(name, args)
        except (RuntimeError, KeyError, ValueError) as e:
            batch, worst, problems = "-", ("-", math.nan, math.nan, ""), [str(e)]
        table.append([name, str(batch), worst[0], f"{worst[1]:.3g}", f"{worst[2]:.3g}",
                      "FAIL" if problems else "OK"])
        if problems:
            details.append(f"{name}: FAIL")
            details += ["  " + p.replace("\n", "\n  ") for p in problems[:40]]
            if len(problems) > 40:
                details.append(f"  ... and {len(problems) - 40} more")

    header = ["model", "batch", "tensor closest to failing", "rel error", "allowed", "result"]
    widths = [max(len(r[i]) for r in table + [header]) for i in range(len(header))]
    print()
    for r in [header] + table:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    if details:
        print("\n" + "\n".join(details))
    failed = sum(r[-1] == "FAIL" for r in table)
    print(f"{len(table) - failed} passed, {failed} failed (tolerance {args.tolerance:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
