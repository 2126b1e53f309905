"""The five example models of examples/*.cairn and their training steps in plain JAX.

For bench/memory/bench.py: XLA's memory plan of the same step Cairn plans. Plain jax.numpy and
jax.lax (no flax). Written as one would for XLA on a CPU: images NHWC, convolution kernels HWIO
(flax's layout), Linear weights [out, in] as in PyTorch (a dot contracts either dimension at no
cost). Parameters and buffers are dicts keyed by the PyTorch state_dict names of
test/reference/pytorch_models.py; `from_torch` converts a state_dict (as NumPy arrays) to these
layouts, so the bench can check a model against its PyTorch twin on the same weights.

The training step is the model file's: training-mode forward (batch statistics, dropout),
mean cross-entropy, backward (jax.grad), BatchNorm running statistics, then the file's
`optimizer` line with torch.optim's update rule (SGD: weight decay, momentum with the first
step's buffer = gradient; Adam: bias-corrected moments). The step counter lives in the
optimizer state as an int32 scalar; dropout draws from a key argument. Labels and
num_batches_tracked are int32 (JAX's default without x64; PyTorch and Cairn use int64).

Mixed precision (`make_train_step(..., compute_dtype=jnp.bfloat16)`, `make_forward(...,
compute_dtype=...)`), as mixed-precision JAX training does it (jmp's policy params=float32,
compute=half, output=float32, with haiku's usual float32 normalization): the float32 master
params (but the norms') and the image are cast to the half type inside the step, the forward
runs in it, batch norm and layer norm keep float32 parameters and compute in float32 from
their half input with float32 statistics, returning the half type, softmax computes in
float32, the logits are cast to float32 for the loss; gradients come back float32 (the
transpose of the cast) and the optimizer updates the float32 params. No loss scaling (f16
would need it to train; it changes no buffer's size).
"""
import ast
import math
import re

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

# ----------------------------------------------------------------------------- layers


def linear(p, name, x):
    y = jnp.matmul(x, p[name + ".weight"].T)
    return y + p[name + ".bias"] if name + ".bias" in p else y


def conv2d(p, name, x, stride=1, padding=0):
    y = lax.conv_general_dilated(x, p[name + ".weight"], (stride, stride),
                                 [(padding, padding)] * 2,
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y + p[name + ".bias"] if name + ".bias" in p else y


class Ctx:
    """What a forward pass threads through its layers: training mode, the dropout key and
    rate override, and the BatchNorm buffers (read in eval mode, updated in training mode)."""

    def __init__(self, state, train, key=None, dropout=True):
        self.state = dict(state)
        self.train = train
        self.key = key
        self.dropout_on = dropout
        self.stream = 0


def batch_norm(p, ctx, name, x, eps=1e-5, momentum=0.1):
    """BatchNorm2d over NHWC: batch statistics and the running update in training mode
    (unbiased variance in the running estimate, as PyTorch), running statistics otherwise."""
    half = _half_dtype(x)
    if half is not None:  # float32 compute, parameters and statistics; the half type out
        x = x.astype(jnp.float32)
        p = {k: p[k].astype(jnp.float32) for k in (name + ".weight", name + ".bias")}
    s = ctx.state
    if ctx.train:
        axes = tuple(range(x.ndim - 1))
        mean = jnp.mean(x, axes)
        var = jnp.mean(jnp.square(x - mean), axes)
        n = x.size // x.shape[-1]
        rm, rv = s[name + ".running_mean"], s[name + ".running_var"]
        s[name + ".running_mean"] = (1 - momentum) * rm + momentum * lax.stop_gradient(mean)
        s[name + ".running_var"] = ((1 - momentum) * rv
                                    + momentum * lax.stop_gradient(var) * (n / (n - 1)))
        s[name + ".num_batches_tracked"] = s[name + ".num_batches_tracked"] + 1
    else:
        mean, var = s[name + ".running_mean"], s[name + ".running_var"]
    y = (x - mean) * lax.rsqrt(var + eps) * p[name + ".weight"] + p[name + ".bias"]
    return y if half is None else y.astype(half)


def layer_norm(p, name, x, eps=1e-5):
    half = _half_dtype(x)
    if half is not None:  # as batch_norm: float32 inside, the half type out
        x = x.astype(jnp.float32)
        p = {k: p[k].astype(jnp.float32) for k in (name + ".weight", name + ".bias")}
    mean = jnp.mean(x, -1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), -1, keepdims=True)
    y = (x - mean) * lax.rsqrt(var + eps) * p[name + ".weight"] + p[name + ".bias"]
    return y if half is None else y.astype(half)


def softmax(x, axis=-1):
    """jax.nn.softmax, computed in float32 for a half input (returned in the half type)."""
    half = _half_dtype(x)
    if half is None:
        return jax.nn.softmax(x, axis)
    return jax.nn.softmax(x.astype(jnp.float32), axis).astype(half)


def _half_dtype(x):
    """x's dtype when it is bfloat16 or float16, else None."""
    return x.dtype if x.dtype in (jnp.bfloat16, jnp.float16) else None


def dropout(ctx, x, rate):
    if not ctx.train or not ctx.dropout_on or rate == 0:
        return x
    key = jax.random.fold_in(ctx.key, ctx.stream)
    ctx.stream += 1
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def max_pool2(x):
    """MaxPool2d(2) on NHWC as reshape + max. The same function as
    lax.reduce_window(x, -inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") (flax's
    max_pool), whose gradient JAX builds from select-and-gather over packed value/index pairs:
    XLA then plans 80 MiB of temp for cnn at batch 64 instead of 45 MiB with this form. Ties
    share the gradient here (PyTorch gives it to the first maximum); after ReLU the only
    likely ties are zeros, whose gradient ReLU stops anyway."""
    b, h, w, c = x.shape
    return x.reshape(b, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


# ----------------------------------------------------------------------------- models
# Each model: params(): {state_dict name: JAX shape} of parameters; buffers(): the same for
# BatchNorm buffers; forward(p, ctx, image NHWC) -> logits; from_torch(name, array) -> the
# array in JAX layout.


def _torch_layout(name, a):
    """OIHW convolution kernels -> HWIO; everything else as is."""
    if name.endswith(".weight") and a.ndim == 4:
        return np.ascontiguousarray(a.transpose(2, 3, 1, 0))
    return a


class MLP:
    input_shape = (28, 28, 1)

    def params(self):
        return {"fc1.weight": (256, 784), "fc1.bias": (256,),
                "fc2.weight": (10, 256), "fc2.bias": (10,)}

    def buffers(self):
        return {}

    def forward(self, p, ctx, image):
        h = jax.nn.relu(linear(p, "fc1", image.reshape(image.shape[0], -1)))
        return linear(p, "fc2", h)

    def from_torch(self, name, a):
        return _torch_layout(name, a)


def _bn(name, c):
    return {name + ".weight": (c,), name + ".bias": (c,)}


def _bn_buffers(name, c):
    return {name + ".running_mean": (c,), name + ".running_var": (c,),
            name + ".num_batches_tracked": ()}


class CNN:
    input_shape = (28, 28, 1)

    def params(self):
        return {"conv1.weight": (3, 3, 1, 32), "conv1.bias": (32,), **_bn("bn1", 32),
                "conv2.weight": (3, 3, 32, 64), "conv2.bias": (64,), **_bn("bn2", 64),
                "fc1.weight": (128, 64 * 7 * 7), "fc1.bias": (128,),
                "fc2.weight": (10, 128), "fc2.bias": (10,)}

    def buffers(self):
        return {**_bn_buffers("bn1", 32), **_bn_buffers("bn2", 64)}

    def forward(self, p, ctx, image):
        h = max_pool2(jax.nn.relu(batch_norm(p, ctx, "bn1", conv2d(p, "conv1", image, 1, 1))))
        h = max_pool2(jax.nn.relu(batch_norm(p, ctx, "bn2", conv2d(p, "conv2", h, 1, 1))))
        h = jax.nn.relu(linear(p, "fc1", h.reshape(h.shape[0], -1)))  # HWC order
        return linear(p, "fc2", dropout(ctx, h, 0.25))

    def from_torch(self, name, a):
        if name == "fc1.weight":  # PyTorch flattens C,H,W; NHWC flattens H,W,C
            return np.ascontiguousarray(
                a.reshape(128, 64, 7, 7).transpose(0, 2, 3, 1).reshape(128, -1))
        return _torch_layout(name, a)


RESNET_LAYERS = [("layer1", 64, 64, 1), ("layer2", 64, 128, 2), ("layer3", 128, 256, 2),
                 ("layer4", 256, 512, 2)]


class ResNet18:
    input_shape = (32, 32, 3)

    def blocks(self):
        """(prefix, in_planes, planes, stride) of the eight BasicBlocks."""
        for layer, cin, c, stride in RESNET_LAYERS:
            yield f"{layer}.0", cin, c, stride
            yield f"{layer}.1", c, c, 1

    def params(self):
        p = {"conv1.weight": (3, 3, 3, 64), **_bn("bn1", 64)}
        for b, cin, c, stride in self.blocks():
            p.update({f"{b}.conv1.weight": (3, 3, cin, c), **_bn(f"{b}.bn1", c),
                      f"{b}.conv2.weight": (3, 3, c, c), **_bn(f"{b}.bn2", c)})
            if stride != 1 or cin != c:
                p.update({f"{b}.downsample.0.weight": (1, 1, cin, c),
                          **_bn(f"{b}.downsample.1", c)})
        p.update({"fc.weight": (10, 512), "fc.bias": (10,)})
        return p

    def buffers(self):
        s = _bn_buffers("bn1", 64)
        for b, cin, c, stride in self.blocks():
            s.update({**_bn_buffers(f"{b}.bn1", c), **_bn_buffers(f"{b}.bn2", c)})
            if stride != 1 or cin != c:
                s.update(_bn_buffers(f"{b}.downsample.1", c))
        return s

    def forward(self, p, ctx, image):
        h = jax.nn.relu(batch_norm(p, ctx, "bn1", conv2d(p, "conv1", image, 1, 1)))
        for b, cin, c, stride in self.blocks():
            out = jax.nn.relu(batch_norm(p, ctx, f"{b}.bn1",
                                         conv2d(p, f"{b}.conv1", h, stride, 1)))
            out = batch_norm(p, ctx, f"{b}.bn2", conv2d(p, f"{b}.conv2", out, 1, 1))
            if stride != 1 or cin != c:
                h = batch_norm(p, ctx, f"{b}.downsample.1",
                               conv2d(p, f"{b}.downsample.0", h, stride, 0))
            h = jax.nn.relu(out + h)
        return linear(p, "fc", jnp.mean(h, axis=(1, 2)))

    def from_torch(self, name, a):
        return _torch_layout(name, a)


class Transformer:
    input_shape = (28, 28, 1)
    seq, d_model, heads, d_ff, depth, p_drop = 28, 64, 4, 256, 4, 0.1

    def params(self):
        d, f = self.d_model, self.d_ff
        p = {"pos_embed": (1, self.seq, d), "embed.weight": (d, 28), "embed.bias": (d,)}
        for i in range(self.depth):
            for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                p.update({f"layers.{i}.{proj}.weight": (d, d), f"layers.{i}.{proj}.bias": (d,)})
            p.update({f"layers.{i}.norm1.weight": (d,), f"layers.{i}.norm1.bias": (d,),
                      f"layers.{i}.linear1.weight": (f, d), f"layers.{i}.linear1.bias": (f,),
                      f"layers.{i}.linear2.weight": (d, f), f"layers.{i}.linear2.bias": (d,),
                      f"layers.{i}.norm2.weight": (d,), f"layers.{i}.norm2.bias": (d,)})
        p.update({"norm.weight": (d,), "norm.bias": (d,), "head.weight": (10, d),
                  "head.bias": (10,)})
        return p

    def buffers(self):
        return {}

    def encoder_layer(self, p, ctx, l, x):
        n, s, d = x.shape
        hd = d // self.heads

        def split(t):  # [N, S, D] -> [N, heads, S, d_head]
            return t.reshape(n, s, self.heads, hd).transpose(0, 2, 1, 3)

        q, k, v = (split(linear(p, f"{l}.{m}", x)) for m in ("q_proj", "k_proj", "v_proj"))
        scores = jnp.matmul(q, k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(hd))
        attn = dropout(ctx, softmax(scores, -1), self.p_drop)
        a = jnp.matmul(attn, v).transpose(0, 2, 1, 3).reshape(n, s, d)
        x = layer_norm(p, f"{l}.norm1", x + dropout(ctx, linear(p, f"{l}.out_proj", a),
                                                    self.p_drop))
        f = jax.nn.gelu(linear(p, f"{l}.linear1", x), approximate=False)
        f = linear(p, f"{l}.linear2", dropout(ctx, f, self.p_drop))
        return layer_norm(p, f"{l}.norm2", x + dropout(ctx, f, self.p_drop))

    def forward(self, p, ctx, image):
        x = linear(p, "embed", image.reshape(image.shape[0], self.seq, 28)) + p["pos_embed"]
        for i in range(self.depth):
            x = self.encoder_layer(p, ctx, f"layers.{i}", x)
        return linear(p, "head", layer_norm(p, "norm", jnp.mean(x, axis=1)))

    def from_torch(self, name, a):
        return _torch_layout(name, a)


class DeepMLP:
    input_shape = (28, 28, 1)
    depth, width = 64, 512

    def sizes(self):
        return [28 * 28] + [self.width] * (self.depth - 1) + [10]

    def params(self):
        s = self.sizes()
        p = {}
        for i in range(self.depth):
            p.update({f"layers.{i}.weight": (s[i + 1], s[i]), f"layers.{i}.bias": (s[i + 1],)})
        return p

    def buffers(self):
        return {}

    def forward(self, p, ctx, image):
        x = image.reshape(image.shape[0], -1)
        for i in range(self.depth - 1):
            x = jax.nn.relu(linear(p, f"layers.{i}", x))
        return linear(p, f"layers.{self.depth - 1}", x)

    def from_torch(self, name, a):
        return _torch_layout(name, a)


MODELS = {"mlp": MLP, "cnn": CNN, "resnet18": ResNet18, "transformer": Transformer,
          "deep_mlp": DeepMLP}

# ----------------------------------------------------------------------------- params


def abstract_params(model):
    """(params, buffers) as jax.ShapeDtypeStructs, for lowering without arrays."""
    p = {n: jax.ShapeDtypeStruct(shape, jnp.float32) for n, shape in model.params().items()}
    s = {n: jax.ShapeDtypeStruct(shape, jnp.int32 if n.endswith("num_batches_tracked")
                                 else jnp.float32) for n, shape in model.buffers().items()}
    return p, s


def from_torch_state_dict(model, sd, dtype=np.float32):
    """(params, buffers) in JAX layout from {state_dict name: NumPy array}, floats as
    `dtype` (float64 needs jax_enable_x64)."""
    p = {n: jnp.asarray(model.from_torch(n, sd[n]).astype(dtype)) for n in model.params()}
    s = {n: jnp.asarray(sd[n].astype(np.int32 if n.endswith("num_batches_tracked")
                                     else dtype)) for n in model.buffers()}
    return p, s


def to_torch_layout(model, name, a):
    """The inverse of from_torch for one array: JAX layout back to PyTorch's."""
    a = np.asarray(a)
    if name == "fc1.weight" and isinstance(model, CNN):
        return a.reshape(128, 7, 7, 64).transpose(0, 3, 1, 2).reshape(128, -1)
    if name.endswith(".weight") and a.ndim == 4:
        return a.transpose(3, 2, 0, 1)
    return a

# ----------------------------------------------------------------------------- optimizer


def read_optimizer(path):
    """(name, kwargs) from the model file's `optimizer Name(...)` line."""
    with open(path) as f:
        match = re.search(r"^\s*optimizer\s+(\w+\(.*\))", f.read(), flags=re.M)
    if not match:
        raise RuntimeError(f"{path}: no `optimizer` line")
    text = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", match.group(1)))
    call = ast.parse(text, mode="eval").body
    return call.func.id, {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def make_optimizer(name, kw):
    """(init(params) -> state, update(params, grads, state) -> (params, state)) with
    torch.optim's rules and defaults."""
    if name == "SGD":
        lr, mom = kw["lr"], kw.get("momentum", 0.0)
        damp, wd, nesterov = kw.get("dampening", 0.0), kw.get("weight_decay", 0.0), \
            kw.get("nesterov", False)

        def init(params):
            st = {"step": jnp.zeros((), jnp.int32)}
            if mom:
                st["momentum_buffer"] = {n: jnp.zeros_like(v) for n, v in params.items()}
            return st

        def update(params, grads, st):
            new_p, new_buf = {}, {}
            for n, p in params.items():
                g = grads[n] + wd * p if wd else grads[n]
                if mom:
                    buf = jnp.where(st["step"] == 0, g,
                                    mom * st["momentum_buffer"][n] + (1 - damp) * g)
                    new_buf[n] = buf
                    g = g + mom * buf if nesterov else buf
                new_p[n] = p - lr * g
            out = {"step": st["step"] + 1}
            if mom:
                out["momentum_buffer"] = new_buf
            return new_p, out
        return init, update
    if name == "Adam":
        lr, (b1, b2) = kw.get("lr", 1e-3), kw.get("betas", (0.9, 0.999))
        eps, wd = kw.get("eps", 1e-8), kw.get("weight_decay", 0.0)

        def init(params):
            return {"step": jnp.zeros((), jnp.int32),
                    "exp_avg": {n: jnp.zeros_like(v) for n, v in params.items()},
                    "exp_avg_sq": {n: jnp.zeros_like(v) for n, v in params.items()}}

        def update(params, grads, st):
            t = (st["step"] + 1).astype(jnp.result_type(float))  # f64 under x64
            bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
            new_p, m_out, v_out = {}, {}, {}
            for n, p in params.items():
                g = grads[n] + wd * p if wd else grads[n]
                m = b1 * st["exp_avg"][n] + (1 - b1) * g
                v = b2 * st["exp_avg_sq"][n] + (1 - b2) * g * g
                denom = jnp.sqrt(v) / jnp.sqrt(bc2) + eps
                # In p's type: under x64 (bench.py's checks) t and the bias
                # corrections are float64, which would widen float32 params.
                new_p[n] = (p - (lr / bc1) * m / denom).astype(p.dtype)
                m_out[n], v_out[n] = m, v
            return new_p, {"step": st["step"] + 1, "exp_avg": m_out, "exp_avg_sq": v_out}
        return init, update
    raise NotImplementedError(f"optimizer {name}")

# ----------------------------------------------------------------------------- steps


def cross_entropy(logits, labels):
    logz = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return jnp.mean(logz - picked)


def norm_params(model):
    """Names of the batch norm and layer norm parameters (kept in float32 under mixed
    precision): those of a module with running statistics or named norm*."""
    buffers = model.buffers()
    return {n for n in model.params()
            if n.rsplit(".", 1)[0] + ".running_mean" in buffers
            or n.rsplit(".", 1)[0].rsplit(".", 1)[-1].startswith("norm")}


def to_compute(model, params, image, compute_dtype):
    """The params (but the norms') and image in the step's compute type (unchanged for
    None): mixed precision casts the float32 master params inside the step, so jax.grad
    differentiates through the cast and the gradients are float32."""
    if compute_dtype is None:
        return params, image
    keep = norm_params(model)
    return ({n: v if n in keep else v.astype(compute_dtype) for n, v in params.items()},
            image.astype(compute_dtype))


def make_train_step(model, optimizer, dropout=True, compute_dtype=None):
    """step(params, buffers, opt_state, image, label, key) ->
    (loss, params, buffers, opt_state): one training step of the model file; with
    compute_dtype (jnp.bfloat16, jnp.float16), mixed precision (the module's docstring)."""
    _, update = optimizer

    def step(params, buffers, opt_state, image, label, key):
        def loss_fn(p):
            ctx = Ctx(buffers, train=True, key=key, dropout=dropout)
            p, x = to_compute(model, p, image, compute_dtype)
            logits = model.forward(p, ctx, x)
            if compute_dtype is not None:
                logits = logits.astype(jnp.float32)
            return cross_entropy(logits, label), ctx.state

        (loss, new_buffers), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        new_params, new_opt = update(params, grads, opt_state)
        return loss, new_params, new_buffers, new_opt
    return step


def make_forward(model, compute_dtype=None):
    """forward(params, buffers, image) -> logits: eval mode (running statistics, no
    dropout); with compute_dtype, in mixed precision (float32 logits)."""
    def forward(params, buffers, image):
        if compute_dtype is None:
            return model.forward(params, Ctx(buffers, train=False), image)
        p, x = to_compute(model, params, image, compute_dtype)
        return model.forward(p, Ctx(buffers, train=False), x).astype(jnp.float32)
    return forward


def param_count(model):
    return sum(int(np.prod(s)) for s in model.params().values())
