#!/usr/bin/python3
"""The five example models of examples/*.cairn written as torch.nn.Modules.

Each module has the same state_dict keys, shapes and order as its .cairn file, so that
check_param_counts.py (and later numerical checks) can compare Cairn against PyTorch.
Run it directly to print every model's parameter count and state_dict.
The model zoo (examples/zoo/*.cairn) is torchvision's own models, where torchvision is
installed (Debian's python3-torchvision 0.14, with python3-torch 1.13 and /usr/bin/python3).
"""
import argparse
import math
import os

import torch
from torch import nn
import torch.nn.functional as F

RESNET18_PARAMS = 11_173_962  # torchvision resnet18(num_classes=10) with the CIFAR stem


class MLP(nn.Module):
    """examples/mlp.cairn"""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, image):
        return self.fc2(F.relu(self.fc1(torch.flatten(image, 1))))


class Autoencoder(nn.Module):
    """examples/autoencoder.cairn: the image is its own target."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Conv2d(1, 16, 3, stride=2, padding=1)
        self.enc2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.dec1 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
        self.dec2 = nn.ConvTranspose2d(16, 1, 3, stride=2, padding=1, output_padding=1)

    def forward(self, image):
        h = F.relu(self.enc2(F.relu(self.enc1(image))))
        return torch.sigmoid(self.dec2(F.relu(self.dec1(h))))

    def loss(self, image, label=None):
        return F.mse_loss(self(image), image)


class CNN(nn.Module):
    """examples/cnn.cairn"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, image):
        h = self.pool(F.relu(self.bn1(self.conv1(image))))
        h = self.pool(F.relu(self.bn2(self.conv2(h))))
        h = F.relu(self.fc1(torch.flatten(h, 1)))
        return self.fc2(self.drop(h))


class BasicBlock(nn.Module):
    """torchvision.models.resnet.BasicBlock (expansion 1)."""

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            x = self.downsample(x)
        return F.relu(out + x)


class ResNet18(nn.Module):
    """examples/resnet18.cairn: CIFAR ResNet-18 (3x3 stem, no max-pool), torchvision names."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, image):
        h = F.relu(self.bn1(self.conv1(image)))
        h = self.layer4(self.layer3(self.layer2(self.layer1(h))))
        return self.fc(torch.flatten(self.avgpool(h), 1))


class EncoderLayer(nn.Module):
    """Post-norm encoder layer, like nn.TransformerEncoderLayer(activation="gelu"),
    with separate q/k/v/out projections."""

    def __init__(self, d_model, heads, d_ff, dropout=0.1):
        super().__init__()
        self.heads = heads
        self.d_head = d_model // heads
        self.scale = 1.0 / math.sqrt(self.d_head)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.dropout1 = nn.Dropout(dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.ff_dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout2 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm2(self.residual(x))

    def residual(self, x):
        """Everything before norm2: its input, the feed-forward block's residual sum (where
        bench/partition's pipelining peer cuts the layer, as Cairn does on 2 devices)."""
        n, s, d = x.shape

        def split(t):  # [N, S, D] -> [N, heads, S, d_head]
            return t.reshape(n, s, self.heads, self.d_head).permute(0, 2, 1, 3)

        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        attn = self.attn_dropout(torch.softmax(q @ k.transpose(2, 3) * self.scale, -1))
        a = (attn @ v).permute(0, 2, 1, 3).reshape(n, s, d)
        x = self.norm1(x + self.dropout1(self.out_proj(a)))
        f = self.linear2(self.ff_dropout(F.gelu(self.linear1(x))))
        return x + self.dropout2(f)


class Transformer(nn.Module):
    """examples/transformer.cairn: Fashion-MNIST rows as a sequence of 28 tokens."""

    def __init__(self, d_model=64, heads=4, d_ff=256, depth=4, dropout=0.1, seq=28):
        super().__init__()
        self.seq = seq
        self.pos_embed = nn.Parameter(torch.empty(1, seq, d_model).normal_(std=0.02))
        self.embed = nn.Linear(28, d_model)
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, heads, d_ff, dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 10)

    def forward(self, image):
        x = self.tokens(image)
        for layer in self.layers:
            x = layer(x)
        return self.classify(x)

    def tokens(self, image):
        """The image's rows, embedded, with the positions added."""
        return self.embed(image.reshape(image.shape[0], self.seq, 28)) + self.pos_embed

    def classify(self, x):
        """The logits of the encoder's output."""
        return self.head(self.norm(x.mean(dim=1)))


class DeepMLP(nn.Module):
    """examples/deep_mlp.cairn: 64 Linear layers in a ModuleList."""

    def __init__(self, depth=64, width=512):
        super().__init__()
        sizes = [28 * 28] + [width] * (depth - 1) + [10]
        self.layers = nn.ModuleList(
            [nn.Linear(sizes[i], sizes[i + 1]) for i in range(depth)])

    def forward(self, image):
        x = torch.flatten(image, 1)
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class Ops(nn.Module):
    """test/codegen/Inputs/ops.cairn: every op the examples do not use, with its own loss."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2, padding=2, dilation=2)
        self.grouped = nn.Conv2d(4, 4, 3, padding=1, groups=2, bias=False)
        self.avg = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.adaptive = nn.AdaptiveAvgPool2d(3)
        self.bn = nn.BatchNorm1d(36)
        self.norm = nn.LayerNorm(12, elementwise_affine=False)
        self.embed = nn.Embedding(10, 12, padding_idx=0)
        self.keys = nn.Parameter(torch.empty(1, 3, 12, 2).normal_(std=0.5))
        self.mix = nn.Parameter(torch.empty(18, 24).uniform_(-0.2, 0.2))
        self.head = nn.Linear(24, 10)

    def forward(self, image):
        b = image.shape[0]
        h = self.avg(self.grouped(F.relu(self.conv(image))))             # [B, 4, 8, 8]
        a = self.adaptive(h)                                             # [B, 4, 3, 3]
        m = self.pool(torch.tanh(h))                                     # [B, 4, 4, 4]
        f = torch.cat([torch.flatten(a, 1), torch.flatten(m[:, :, ::2, 1:3], 1)], 1)
        f = torch.sigmoid(self.bn(f[:, 0:36]))                           # [B, 36]
        q = self.norm(F.gelu(f.reshape(b, 1, 3, 12), approximate="tanh"))
        s = torch.softmax(q @ self.keys, -1)                             # [B, 3, 3, 2]
        u = s.transpose(2, 3)                                            # [B, 3, 2, 3]
        t = u - u.mean(dim=1, keepdim=True) / 2.0
        return self.head(F.dropout(t.reshape(b, 18) @ self.mix, 0.1, self.training))

    def loss(self, image, label):
        """The model file's `loss` block (the default is cross_entropy(self(image), label))."""
        logits = self(image)
        e = torch.sum(self.embed(label), dim=1, keepdim=True)           # [B, 1]
        return (F.cross_entropy(F.log_softmax(logits, 1), label)
                + F.mse_loss(logits[:, 0:1], e))


class Activations(nn.Module):
    """test/codegen/Inputs/activations.cairn: the activations the examples do not use."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.act = nn.SiLU()
        self.fc2 = nn.Linear(64, 48)
        self.hs = nn.Hardswish()
        self.leaky = nn.LeakyReLU(0.2)
        self.bounded = nn.Hardtanh(-1.5, max_val=2.0)
        self.six = nn.ReLU6()
        self.head = nn.Linear(48, 10)

    def forward(self, image):
        h = self.act(self.fc1(torch.flatten(image, 1)))
        h = F.silu(h * 2.0) + self.leaky(h) + F.leaky_relu(h - 0.5)
        g = self.fc2(h) * 8.0
        g = self.hs(g) - F.hardswish(g - 1.0) / 2.0
        c = torch.clamp(g, min=-0.5) + torch.clamp(g, max=0.5) + torch.clamp(g, -3, 3)
        return self.head(self.bounded(g) + self.six(g) + F.relu6(g * 2.0) + F.hardtanh(g) + c)


class Tensors(nn.Module):
    """test/codegen/Inputs/tensors.cairn: expand, repeat, zeros, ones, full, and tuple
    assignment from unbind, chunk and split."""

    def __init__(self):
        super().__init__()
        width, heads = (16, 3)
        self.width, self.heads = width, heads
        self.cls = nn.Parameter(torch.empty(1, 1, width).normal_(std=0.5))
        self.bias = nn.Parameter(torch.empty(width).uniform_(-0.5, 0.5))
        self.embed = nn.Linear(28, width)
        self.qkv = nn.Linear(width, heads * width)
        self.head = nn.Linear(width, 10)
        self.up = nn.Upsample(scale_factor=2)
        self.smooth = nn.Upsample(scale_factor=1.5, mode="bilinear")
        self.deconv = nn.ConvTranspose2d(1, 2, 3, stride=2, padding=1, output_padding=1)
        self.deconv2 = nn.ConvTranspose2d(2, 4, (2, 3), stride=(2, 1), groups=2, bias=False,
                                          dilation=(1, 2))
        self.norm = nn.GroupNorm(2, 4)
        self.plain = nn.GroupNorm(1, 2, affine=False)

    def forward(self, image):
        b = image.shape[0]
        x = self.embed(image.reshape(b, 28, 28))
        c = self.cls.expand(b, -1, -1)
        x = torch.cat([c, x], 1)
        t = (x.repeat(1, 2, 1) * torch.ones(58, 16) + torch.zeros(b, 58, 16)
             + torch.full([16], 0.25))
        u = self.bias.repeat(2, 1, 1) + self.bias.reshape(16, 1).expand(16, 3)[:, 0]
        q, k, v = self.qkv(x).reshape(b, 29, self.heads, self.width).permute(2, 0, 1, 3).unbind(0)
        att = torch.softmax(q @ k.transpose(1, 2) / 4.0, -1) @ v
        lo, hi = att.chunk(2, dim=-1)
        s1, s2, s3 = torch.split(x, [4, 8, 4], dim=2)
        p1, p2 = x.split(15, dim=1)
        w = torch.cat([lo * hi, s2], 2) + torch.cat([s1, s3], 2).repeat(1, 1, 2)
        z = p1.mean(dim=1) - p2.mean(dim=1) + w.mean(dim=1)
        g = self.up(x.reshape(b, 1, 29, 16))
        h2 = F.interpolate(g[:, :, 0:29, 0:8], size=(58, 16))
        z = z + (h2.reshape(b, 58, 16) * g[:, :, :, 0:16].reshape(b, 58, 16)).mean(dim=1)
        bl = self.smooth(x.reshape(b, 1, 29, 16))
        ac = F.interpolate(x.reshape(b, 1, 29, 16), size=(20, 11), mode="bilinear",
                           align_corners=True)
        z = z + bl.reshape(b, -1)[:, 100:116] * ac.reshape(b, -1)[:, 50:66]
        d = self.norm(self.deconv2(F.relu(self.plain(self.deconv(g[:, :, 0:8, 0:8])))))
        z = z + (d.reshape(b, -1) * d.reshape(b, -1)).mean(dim=1, keepdim=True)
        return self.head(t.mean(dim=1) * 0.5 + u.mean(dim=0)[0, :] + z)


class Schedule(nn.Module):
    """test/codegen/Inputs/schedule.cairn: a small MLP whose training schedules the lr and
    clips the gradients (the check reads both from the file, as it reads the optimizer)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class DoubleConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(cout), nn.ReLU(),
                                   nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                                   nn.BatchNorm2d(cout), nn.ReLU())

    def forward(self, x):
        return self.block(x)


class UNet(nn.Module):
    """examples/zoo/unet.cairn: a small U-Net, trained against its input."""

    def __init__(self):
        super().__init__()
        self.inc = DoubleConv(1, 16)
        self.down1 = DoubleConv(16, 32)
        self.down2 = DoubleConv(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.up1 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.conv1 = DoubleConv(64, 32)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.conv2 = DoubleConv(32, 16)
        self.outc = nn.Conv2d(16, 1, 1)

    def forward(self, image):
        x1 = self.inc(image)
        x2 = self.down1(self.pool(x1))
        x3 = self.down2(self.pool(x2))
        y = self.conv1(torch.cat([x2, self.up1(x3)], 1))
        y = self.conv2(torch.cat([x1, self.up2(y)], 1))
        return self.outc(y)

    def loss(self, image, label=None):
        return F.mse_loss(self(image), image)


# example file stem -> (constructor, input shape without the batch dimension)
MODELS = {
    "mlp": (MLP, (1, 28, 28)),
    "cnn": (CNN, (1, 28, 28)),
    "resnet18": (ResNet18, (3, 32, 32)),
    "transformer": (Transformer, (1, 28, 28)),
    "deep_mlp": (DeepMLP, (1, 28, 28)),
    "autoencoder": (Autoencoder, (1, 28, 28)),
    # The same file with `depth = 12`: the 12-layer encoder the language must express.
    "transformer12": (lambda: Transformer(depth=12), (1, 28, 28)),
    "ops": (Ops, (1, 28, 28)),  # test/codegen/Inputs/ops.cairn
    "activations": (Activations, (1, 28, 28)),  # test/codegen/Inputs/activations.cairn
    "tensors": (Tensors, (1, 28, 28)),  # test/codegen/Inputs/tensors.cairn
    "schedule": (Schedule, (1, 28, 28)),  # test/codegen/Inputs/schedule.cairn
    "unet": (UNet, (1, 28, 28)),  # examples/zoo/unet.cairn
}

# examples/zoo: torchvision's models themselves; their weights are torchvision's own
# (check_step_agreement loads them into the executable). The files declare ImageNet's 224x224;
# the step is checked at 64x64 (ZOO_CHECK_SIZE, the file's input line rewritten), the same
# layers and state_dict (adaptive pooling), with a twelfth of the near-tie ReLU inputs whose
# slack the check computes one by one.
ZOO_CHECK_SIZE = 64
try:
    import torchvision
    ZOO = {"resnet50": (torchvision.models.resnet50, (3, ZOO_CHECK_SIZE, ZOO_CHECK_SIZE)),
           "vgg11": (torchvision.models.vgg11, (3, ZOO_CHECK_SIZE, ZOO_CHECK_SIZE)),
           "mobilenet_v2": (torchvision.models.mobilenet_v2,
                            (3, ZOO_CHECK_SIZE, ZOO_CHECK_SIZE)),
           # vit_b_16's layout made small, at the file's own 32x32.
           "vit": (lambda: torchvision.models.VisionTransformer(
               image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
               mlp_dim=128, num_classes=10), (3, 32, 32))}
except ImportError:  # the checks name the zoo models they skip
    ZOO = {}
ZOO_NAMES = ("resnet50", "vgg11", "mobilenet_v2", "vit")
MODELS.update(ZOO)

# Models whose file is not <examples>/<name>.cairn, relative to the repository root.
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_MODEL_FILES = {name: os.path.join(_REPO, "test", "codegen", "Inputs", name + ".cairn")
                for name in ("ops", "activations", "tensors", "schedule")}
_MODEL_FILES.update({name: os.path.join(_REPO, "examples", "zoo", name + ".cairn")
                     for name in ZOO_NAMES + ("unet",)})


def model_file(name, examples):
    """The .cairn file of MODELS[name]: examples/<name>.cairn unless it lives elsewhere."""
    return _MODEL_FILES.get(name, os.path.join(examples, name + ".cairn"))


DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32",
          torch.float64: "f64", torch.int32: "i32", torch.int64: "i64"}


def state_dict_entries(model):
    """The state_dict as [{"name", "shape", "kind", "dtype"}], in PyTorch's order."""
    params = {name for name, _ in model.named_parameters()}
    return [{"name": name, "shape": list(t.shape),
             "kind": "param" if name in params else "buffer",
             "dtype": DTYPES[t.dtype]}
            for name, t in model.state_dict().items()]


def param_count(model):
    return sum(p.numel() for p in model.parameters())


def buffer_count(model):
    return sum(b.numel() for b in model.buffers())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=list(MODELS), help="example names")
    ap.add_argument("--keys", action="store_true", help="print every state_dict entry")
    ap.add_argument("--run", type=int, metavar="B", help="also run a forward pass at batch B")
    args = ap.parse_args()
    for name in args.models:
        ctor, in_shape = MODELS[name]
        model = ctor()
        print(f"{name}: {param_count(model):,} parameters, {buffer_count(model):,} buffer "
              f"elements, {len(model.state_dict())} state_dict entries")
        if args.keys:
            for e in state_dict_entries(model):
                print(f"  {e['name']:40s} {e['kind']:6s} {e['dtype']} {e['shape']}")
        if args.run:
            out = model(torch.randn(args.run, *in_shape))
            print(f"  forward: {list(out.shape)}")
    if "resnet18" in args.models:
        assert param_count(ResNet18()) == RESNET18_PARAMS


if __name__ == "__main__":
    main()
