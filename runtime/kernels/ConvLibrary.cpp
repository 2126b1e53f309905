//===- ConvLibrary.cpp - oneDNN's convolutions inside the plan ------------===//
//
// A site's plan: the primitive descriptor oneDNN picks for a chunk of
// images with every layout left to it (format_tag::any), the reorders from
// and to NCHW, and where each blocked copy and the scratchpad lie in the
// workspace. The slice is the widest whose one image fits im2col's bytes;
// the chunk the largest whose layout fits, found by bisection over
// primitive descriptors (cheap: the kernels are generated only for the
// chosen chunk and the batch's remainder). A slice's operands are views of
// the whole tensors (their strides), so the NCHW buffers are read and
// written in place.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/ConvLibrary.h"

#include "runtime/kernels/HalfConv.h"
#include "runtime/kernels/KernelError.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace cairn::kernels {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr size_t kAlign = 64; // a cache line: where each copy starts

size_t alignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

memory::desc plainDesc(memory::dims dims) {
  return memory::desc(dims, memory::data_type::f32,
                      dims.size() == 4 ? Tag::nchw : Tag::x);
}
/// A view of `dims` inside a dense NCHW (or OIHW) tensor of `full` dims: a
/// slice of the channels keeps the whole tensor's strides.
memory::desc userDesc(const memory::dims &dims, const memory::dims &full) {
  if (dims.size() != 4)
    return plainDesc(dims);
  const memory::dims strides = {full[1] * full[2] * full[3], full[2] * full[3],
                                full[3], 1};
  return memory::desc(dims, memory::data_type::f32, strides);
}
/// Elements from one slice of `full` to the next: the width of the axis a
/// slice `dims` cuts, times that axis's stride (0 where nothing is cut).
int64_t sliceStep(const memory::dims &dims, const memory::dims &full) {
  int64_t stride = 1;
  for (int axis = static_cast<int>(full.size()) - 1; axis >= 0; --axis) {
    if (dims[axis] != full[axis])
      return dims[axis] * stride;
    stride *= full[axis];
  }
  return 0;
}
memory::desc anyDesc(memory::dims dims) {
  return memory::desc(dims, memory::data_type::f32, Tag::any);
}

/// oneDNN's implementations worth calling instead of im2col + OpenBLAS:
/// not its reference loops, nor its own im2col + GEMM ("gemm:jit"), whose
/// scratchpad is a column matrix per thread.
bool isFastImplementation(const char *name) {
  std::string impl = name ? name : "";
  return !impl.empty() && impl.rfind("ref", 0) != 0 &&
         impl.find("gemm") == std::string::npos;
}

} // namespace

struct ConvLibrary::Engine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

/// One operand of a chunk: its NCHW (or OIHW) layout and oneDNN's; when they
/// differ, the reorder between them and where the blocked copy lies.
struct Operand {
  memory::desc user, library;
  bool copied = false;
  size_t offset = 0;     // of the copy, in the workspace
  int64_t sliceStep = 0; // elements of the user's tensor between slices
  // user -> library (inputs), or back (outputs); library -> user adding to
  // it (the weight gradient of a chunk after the first).
  dnnl::reorder::primitive_desc reorderDesc, accumulateDesc;
  dnnl::reorder reorder, accumulate;
};

/// The primitives of `images` images.
struct Chunk {
  int64_t images = 0;
  dnnl::primitive conv;
  Operand batched[2]; // per-image operands: in, then out (backward weight:
                      // src and diff_dst, both in)
  Operand whole;      // weights in, or the weight gradient out
  size_t scratchOffset = 0;
  memory::desc scratch;
};

struct ConvLibrary::Site {
  ConvPass pass{};
  Conv2dShape shape{};
  // The sliced channels (conv2dSlicedChannels) a call takes, and the calls
  // that take them all.
  int64_t slice = 0, slices = 1;
  bool bias = false;
  size_t workspaceBytes = 0;
  bool usable = false;
  std::string description;
  std::optional<Chunk> full, rest; // rest: the batch's last, smaller chunk
};

namespace {

struct Dims {
  memory::dims src, weights, bias, dst, strides, dilates, padL, padR;
};

Dims getDims(const Conv2dShape &s, int64_t images) {
  Dims d;
  d.src = {images, s.c, s.h, s.w};
  d.weights = {s.o, s.c, s.kh, s.kw};
  d.bias = {s.o};
  d.dst = {images, s.o, s.ho, s.wo};
  d.strides = {s.sh, s.sw};
  d.dilates = {s.dh - 1, s.dw - 1};
  d.padL = {s.ph, s.pw};
  // oneDNN's right padding: what makes the output size the shape's.
  d.padR = {(s.ho - 1) * s.sh + (s.kh - 1) * s.dh + 1 - s.h - s.ph,
            (s.wo - 1) * s.sw + (s.kw - 1) * s.dw + 1 - s.w - s.pw};
  return d;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// The primitive descriptors of one chunk; the backward passes need the
/// forward's as a hint.
struct ChunkDescs {
  dnnl::convolution_forward::primitive_desc forward;
  dnnl::convolution_backward_data::primitive_desc backwardData;
  dnnl::convolution_backward_weights::primitive_desc backwardWeights;
  dnnl::primitive_desc_base pd() const {
    if (backwardData)
      return backwardData;
    if (backwardWeights)
      return backwardWeights;
    return forward;
  }
};

std::optional<ChunkDescs> describeChunk(const dnnl::engine &engine,
                                        const Conv2dShape &s, ConvPass pass,
                                        bool bias, int64_t images) {
  const Dims d = getDims(s, images);
  const auto algorithm = dnnl::algorithm::convolution_direct;
  const memory::desc src = anyDesc(d.src), weights = anyDesc(d.weights),
                     dst = anyDesc(d.dst), biasDesc = plainDesc(d.bias);
  try {
    ChunkDescs descs;
    dnnl::primitive_attr attr = userScratchpad();
    auto forwardDesc =
        bias ? dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training, algorithm, src, weights,
                   biasDesc, dst, d.strides, d.dilates, d.padL, d.padR)
             : dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training, algorithm, src, weights,
                   dst, d.strides, d.dilates, d.padL, d.padR);
    descs.forward =
        dnnl::convolution_forward::primitive_desc(forwardDesc, attr, engine);
    if (pass == ConvPass::BackwardInput)
      descs.backwardData = dnnl::convolution_backward_data::primitive_desc(
          dnnl::convolution_backward_data::desc(algorithm, src, weights, dst,
                                                d.strides, d.dilates, d.padL,
                                                d.padR),
          attr, engine, descs.forward);
    if (pass == ConvPass::BackwardWeight)
      descs.backwardWeights =
          dnnl::convolution_backward_weights::primitive_desc(
              dnnl::convolution_backward_weights::desc(
                  algorithm, src, weights, dst, d.strides, d.dilates, d.padL,
                  d.padR),
              attr, engine, descs.forward);
    if (!isFastImplementation(descs.pd().impl_info_str()))
      return std::nullopt;
    return descs;
  } catch (const dnnl::error &) {
    return std::nullopt; // no implementation for the shape
  }
}

/// Lays out one chunk's copies and scratchpad in the workspace (without
/// creating any primitive); the bytes it takes, or nullopt.
struct ChunkLayout {
  ChunkDescs descs;
  Operand batched[2], whole;
  memory::desc scratch;
  size_t scratchOffset = 0, bytes = 0;
  bool wholeAccumulates = false;
};

std::optional<ChunkLayout> layOutChunk(const dnnl::engine &engine,
                                       const Conv2dShape &s, ConvPass pass,
                                       bool bias, int64_t images,
                                       int64_t chunks, int64_t slice) {
  const Conv2dShape sliced = conv2dSlicedShape(s, pass, slice);
  std::optional<ChunkDescs> descs =
      describeChunk(engine, sliced, pass, bias, images);
  if (!descs)
    return std::nullopt;
  const Dims d = getDims(sliced, images), full = getDims(s, images);
  ChunkLayout layout;
  layout.descs = *descs;
  auto setOperand = [](Operand &op, const memory::dims &dims,
                       const memory::dims &whole, memory::desc library) {
    op.user = userDesc(dims, whole);
    op.library = library;
    op.copied = !(op.user == library);
    op.sliceStep = sliceStep(dims, whole);
  };
  switch (pass) {
  case ConvPass::Forward:
    setOperand(layout.batched[0], d.src, full.src, descs->forward.src_desc());
    setOperand(layout.batched[1], d.dst, full.dst, descs->forward.dst_desc());
    setOperand(layout.whole, d.weights, full.weights,
               descs->forward.weights_desc());
    break;
  case ConvPass::BackwardInput:
    setOperand(layout.batched[0], d.dst, full.dst,
               descs->backwardData.diff_dst_desc());
    setOperand(layout.batched[1], d.src, full.src,
               descs->backwardData.diff_src_desc());
    setOperand(layout.whole, d.weights, full.weights,
               descs->backwardData.weights_desc());
    break;
  case ConvPass::BackwardWeight:
    setOperand(layout.batched[0], d.src, full.src,
               descs->backwardWeights.src_desc());
    setOperand(layout.batched[1], d.dst, full.dst,
               descs->backwardWeights.diff_dst_desc());
    setOperand(layout.whole, d.weights, full.weights,
               descs->backwardWeights.diff_weights_desc());
    // Each chunk's gradient is added to the sum of those before it, from
    // a copy of its own.
    if (chunks > 1)
      layout.whole.copied = true;
    layout.wholeAccumulates = chunks > 1;
    break;
  }
  try {
    dnnl::primitive_attr attr = userScratchpad();
    auto reorderDesc = [&](const memory::desc &from, const memory::desc &to,
                           const dnnl::primitive_attr &a) {
      return dnnl::reorder::primitive_desc(engine, from, engine, to, a);
    };
    const bool out[3] = {false, pass != ConvPass::BackwardWeight,
                         pass == ConvPass::BackwardWeight};
    Operand *ops[3] = {&layout.batched[0], &layout.batched[1], &layout.whole};
    for (int i = 0; i < 3; ++i)
      if (ops[i]->copied)
        ops[i]->reorderDesc =
            out[i] ? reorderDesc(ops[i]->library, ops[i]->user, attr)
                   : reorderDesc(ops[i]->user, ops[i]->library, attr);
    if (layout.wholeAccumulates) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      dnnl::primitive_attr adding = userScratchpad();
      adding.set_post_ops(sum);
      layout.whole.accumulateDesc =
          reorderDesc(layout.whole.library, layout.whole.user, adding);
    }
  } catch (const dnnl::error &) {
    return std::nullopt; // no reorder between these layouts
  }
  size_t bytes = 0;
  for (Operand *op : {&layout.whole, &layout.batched[0], &layout.batched[1]})
    if (op->copied) {
      op->offset = bytes;
      bytes += alignUp(op->library.get_size());
    }
  // The primitives run one after the other: one scratchpad serves them all.
  size_t scratch = descs->pd().scratchpad_desc().get_size();
  for (const Operand *op :
       {&layout.whole, &layout.batched[0], &layout.batched[1]})
    for (const dnnl::reorder::primitive_desc *r :
         {&op->reorderDesc, &op->accumulateDesc})
      if (*r)
        scratch = std::max(scratch, r->scratchpad_desc().get_size());
  layout.scratch = memory::desc({static_cast<memory::dim>(scratch)},
                                memory::data_type::u8, Tag::x);
  layout.scratchOffset = bytes;
  layout.bytes = bytes + alignUp(scratch);
  return layout;
}

/// Creates the primitives of a laid-out chunk: oneDNN generates their code
/// here.
Chunk createChunk(const ChunkLayout &layout, ConvPass pass, int64_t images) {
  Chunk chunk;
  chunk.images = images;
  switch (pass) {
  case ConvPass::Forward:
    chunk.conv = dnnl::convolution_forward(layout.descs.forward);
    break;
  case ConvPass::BackwardInput:
    chunk.conv = dnnl::convolution_backward_data(layout.descs.backwardData);
    break;
  case ConvPass::BackwardWeight:
    chunk.conv =
        dnnl::convolution_backward_weights(layout.descs.backwardWeights);
    break;
  }
  chunk.batched[0] = layout.batched[0];
  chunk.batched[1] = layout.batched[1];
  chunk.whole = layout.whole;
  for (Operand *op : {&chunk.batched[0], &chunk.batched[1], &chunk.whole}) {
    if (op->reorderDesc)
      op->reorder = dnnl::reorder(op->reorderDesc);
    if (op->accumulateDesc)
      op->accumulate = dnnl::reorder(op->accumulateDesc);
  }
  chunk.scratch = layout.scratch;
  chunk.scratchOffset = layout.scratchOffset;
  return chunk;
}

} // namespace

ConvLibrary::ConvLibrary(bool enabled) : enabled(enabled) {
  if (enabled)
    engine = std::make_unique<Engine>();
}

ConvLibrary::~ConvLibrary() = default;

ConvLibrary::Site &ConvLibrary::getSite(int index, int part, ConvPass pass,
                                        const Conv2dShape &s, bool bias,
                                        size_t workspaceBytes) {
  if (index < 0 || part < 0)
    throw KernelError("convolution call site " + std::to_string(index) +
                      " part " + std::to_string(part));
  if (static_cast<size_t>(index) >= sites.size())
    sites.resize(index + 1);
  if (static_cast<size_t>(part) >= sites[index].size())
    sites[index].resize(part + 1);
  std::unique_ptr<Site> &slot = sites[index][part];
  if (slot) {
    const bool same = slot->pass == pass && slot->bias == bias &&
                      slot->workspaceBytes == workspaceBytes &&
                      slot->shape == s;
    if (!same)
      throw KernelError("convolution call site " + std::to_string(index) +
                        " called with another shape or pass");
    return *slot;
  }
  slot = std::make_unique<Site>();
  Site &site = *slot;
  site.pass = pass;
  site.shape = s;
  site.bias = bias;
  site.workspaceBytes = workspaceBytes;
  if (!enabled) {
    site.description = "im2col (oneDNN disabled by CAIRN_CPU_CONV=im2col)";
    return site;
  }
  if (s.groups != 1 || s.n <= 0) {
    site.description = "im2col (grouped or empty: not taken to oneDNN)";
    return site;
  }
  const dnnl::engine &eng = engine->engine;
  int64_t slice = 0;
  auto fits = [&](int64_t images, size_t limit) -> std::optional<ChunkLayout> {
    const int64_t chunks = (s.n + images - 1) / images;
    std::optional<ChunkLayout> layout =
        layOutChunk(eng, s, pass, bias, images, chunks, slice);
    if (!layout || layout->bytes > limit)
      return std::nullopt;
    return layout;
  };
  // Whether oneDNN runs the site, and in which slices, is decided within
  // the bytes every plan of the model gives it, im2col's rule, never the
  // spare bytes of one plan: every build of a model (any plan,
  // recomputation, partition) computes the same bits.
  const size_t planned = conv2dWorkspaceElements(s, pass) * sizeof(float);
  if (workspaceBytes < planned)
    throw KernelError("convolution call site " + std::to_string(index) +
                      ": a workspace of " + std::to_string(workspaceBytes) +
                      " bytes is smaller than im2col's " +
                      std::to_string(planned));
  const int64_t channels = conv2dSlicedChannels(s, pass);
  const std::vector<int64_t> widths = conv2dChannelSlices(s, pass);
  std::optional<ChunkLayout> best;
  for (int64_t width : widths) {
    slice = width;
    if ((best = fits(1, planned)))
      break;
  }
  if (!best) {
    std::optional<ChunkLayout> one =
        layOutChunk(eng, s, pass, bias, 1, s.n, widths.back());
    site.description =
        one ? "im2col (oneDNN " + std::string(one->descs.pd().impl_info_str()) +
                  " needs " + std::to_string(one->bytes) +
                  " bytes for one image" +
                  (widths.back() < channels
                       ? " in slices of " + std::to_string(widths.back()) +
                             " channels"
                       : std::string()) +
                  ", im2col's workspace holds " + std::to_string(planned) + ")"
            : "im2col (no fast oneDNN implementation of this shape)";
    return site;
  }
  // The largest chunk that fits: the copies grow with it. The weight
  // gradient adds its chunks' gradients, so its chunk is every plan's too;
  // the forward and input gradient give the same bits in any chunk
  // (ConvLibraryTest) and take every byte they get.
  const size_t limit =
      pass == ConvPass::BackwardWeight ? planned : workspaceBytes;
  int64_t lo = 1, hi = s.n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (std::optional<ChunkLayout> layout = fits(mid, limit)) {
      lo = mid;
      best = std::move(layout);
    } else {
      hi = mid - 1;
    }
  }
  // The batch's last, shorter chunk must fit too (it does but where its
  // kernel wants more scratchpad): else smaller chunks.
  int64_t images = lo, rest = s.n % images;
  std::optional<ChunkLayout> restLayout;
  while (rest != 0 && !(restLayout = fits(rest, limit))) {
    best = fits(--images, limit);
    rest = images > 0 ? s.n % images : 0;
    if (!best) {
      site.description = "im2col (oneDNN's chunks do not fit)";
      return site;
    }
  }
  try {
    site.full = createChunk(*best, pass, images);
    if (rest != 0)
      site.rest = createChunk(*restLayout, pass, rest);
  } catch (const dnnl::error &e) {
    site.full.reset();
    site.rest.reset();
    site.description =
        std::string("im2col (oneDNN failed to create its kernels: ") +
        e.what() + ")";
    return site;
  }
  site.usable = true;
  site.slice = slice;
  site.slices = channels / slice;
  site.description = "oneDNN " + std::string(best->descs.pd().impl_info_str()) +
                     ", " + std::to_string(images) +
                     (images == 1 ? " image a call" : " images a call");
  if (site.slices > 1)
    site.description +=
        " in " + std::to_string(site.slices) + " slices of " +
        std::to_string(slice) +
        (pass == ConvPass::BackwardInput ? " input" : " output") + " channels";
  return site;
}

namespace {

/// The oneDNN arguments of a pass: its two per-image operands (in, then out;
/// both in for the weight gradient), whether each has the input's shape
/// (else the output's), and the whole one (weights, or their gradient).
struct PassArgs {
  int batched[2];
  bool inputShaped[2];
  int whole;
};
PassArgs getPassArgs(ConvPass pass) {
  switch (pass) {
  case ConvPass::Forward:
    return {{DNNL_ARG_SRC, DNNL_ARG_DST}, {true, false}, DNNL_ARG_WEIGHTS};
  case ConvPass::BackwardInput:
    return {{DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC},
            {false, true},
            DNNL_ARG_WEIGHTS};
  case ConvPass::BackwardWeight:
    break;
  }
  return {
      {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST}, {true, false}, DNNL_ARG_DIFF_WEIGHTS};
}

/// Runs the chunks of a site over the per-image operands at `batched` (in
/// PassArgs' order) and the weights or weight gradient at `whole`.
void runChunks(const ConvLibrary::Site &site, const dnnl::engine &engine,
               dnnl::stream &stream, float *const batched[2], float *whole,
               const float *bias, unsigned char *workspace) {
  const Conv2dShape &s = site.shape;
  const bool weightGradient = site.pass == ConvPass::BackwardWeight;
  const PassArgs pass = getPassArgs(site.pass);
  int64_t imageElements[2];
  for (int i = 0; i < 2; ++i)
    imageElements[i] =
        pass.inputShaped[i] ? s.c * s.h * s.w : s.o * s.ho * s.wo;
  const Chunk &first = *site.full;
  auto scratchpad = [&](const Chunk &chunk) {
    return memory(chunk.scratch, engine, workspace + chunk.scratchOffset);
  };
  auto copy = [&](const dnnl::reorder &reorder, const memory &from,
                  const memory &to, const Chunk &chunk) {
    reorder.execute(stream, {{DNNL_ARG_FROM, from},
                             {DNNL_ARG_TO, to},
                             {DNNL_ARG_SCRATCHPAD, scratchpad(chunk)}});
  };
  // Slice by slice (one, mostly), each with its part of the weights and of
  // the sliced per-image operand.
  for (int64_t k = 0; k < site.slices; ++k) {
    // Weights in: one reorder per slice, shared by the chunks (the last,
    // smaller chunk's kernel may want another layout: reordered again then,
    // into the same place, which every layout starts with).
    memory wholeUser(first.whole.user, engine,
                     whole + k * first.whole.sliceStep),
        wholeLibrary;
    const Chunk *wholeOf = nullptr;
    for (int64_t b0 = 0; b0 < s.n; b0 += first.images) {
      const Chunk &chunk = s.n - b0 < first.images ? *site.rest : first;
      if (&chunk != wholeOf) {
        const bool same = wholeOf &&
                          wholeOf->whole.copied == chunk.whole.copied &&
                          wholeOf->whole.library == chunk.whole.library;
        if (!same) {
          wholeLibrary = chunk.whole.copied
                             ? memory(chunk.whole.library, engine,
                                      workspace + chunk.whole.offset)
                             : wholeUser;
          if (!weightGradient && chunk.whole.copied)
            copy(chunk.whole.reorder, wholeUser, wholeLibrary, chunk);
        }
        wholeOf = &chunk;
      }
      std::unordered_map<int, memory> args;
      args[pass.whole] = wholeLibrary;
      memory users[2], libraries[2];
      for (int i = 0; i < 2; ++i) {
        const Operand &op = chunk.batched[i];
        users[i] =
            memory(op.user, engine,
                   batched[i] + b0 * imageElements[i] + k * op.sliceStep);
        libraries[i] = op.copied
                           ? memory(op.library, engine, workspace + op.offset)
                           : users[i];
        args[pass.batched[i]] = libraries[i];
        const bool in = i == 0 || weightGradient;
        // A whole-batch chunk's unsliced input is in place from the slice
        // before.
        const bool inPlace = k > 0 && op.sliceStep == 0 && s.n <= first.images;
        if (in && op.copied && !inPlace)
          copy(op.reorder, users[i], libraries[i], chunk);
      }
      if (bias) // the forward's: sliced with the output channels
        args[DNNL_ARG_BIAS] =
            memory(plainDesc({site.slice}), engine,
                   const_cast<float *>(bias) + k * site.slice);
      args[DNNL_ARG_SCRATCHPAD] = scratchpad(chunk);
      chunk.conv.execute(stream, args);
      if (!weightGradient && chunk.batched[1].copied)
        copy(chunk.batched[1].reorder, libraries[1], users[1], chunk);
      // The weight gradient: the first chunk's copied out, the others' added.
      if (weightGradient && chunk.whole.copied)
        copy(b0 == 0 ? chunk.whole.reorder : chunk.whole.accumulate,
             wholeLibrary, wholeUser, chunk);
    }
  }
  stream.wait();
}

} // namespace

bool ConvLibrary::run(int index, int part, ConvPass pass, const Conv2dShape &s,
                      const float *in, const float *other, float *out,
                      const float *bias, void *workspace,
                      size_t workspaceBytes) {
  Site &site = getSite(index, part, pass, s, bias != nullptr, workspaceBytes);
  if (listener)
    listener(listenerContext, site.description);
  if (!site.usable)
    return false;
  // The per-image operands and the whole one, in PassArgs' order.
  float *const batched[2] = {
      const_cast<float *>(in),
      pass == ConvPass::BackwardWeight ? const_cast<float *>(other) : out};
  float *whole =
      pass == ConvPass::BackwardWeight ? out : const_cast<float *>(other);
  runChunks(site, engine->engine, engine->stream, batched, whole, bias,
            static_cast<unsigned char *>(workspace));
  return true;
}

bool ConvLibrary::forward(int index, const Conv2dShape &s, const float *x,
                          const float *w, const float *bias, float *y,
                          void *workspace, size_t workspaceBytes, int part) {
  return run(index, part, ConvPass::Forward, s, x, w, y, bias, workspace,
             workspaceBytes);
}

bool ConvLibrary::backwardInput(int index, const Conv2dShape &s,
                                const float *dy, const float *w, float *dx,
                                void *workspace, size_t workspaceBytes,
                                int part) {
  return run(index, part, ConvPass::BackwardInput, s, dy, w, dx, nullptr,
             workspace, workspaceBytes);
}

bool ConvLibrary::backwardWeight(int index, const Conv2dShape &s,
                                 const float *dy, const float *x, float *dw,
                                 void *workspace, size_t workspaceBytes) {
  // oneDNN's per-image operands of a weight gradient: the input, then dy.
  return run(index, 0, ConvPass::BackwardWeight, s, x, dy, dw, nullptr,
             workspace, workspaceBytes);
}

std::string ConvLibrary::describe(int index, int part) const {
  if (index < 0 || part < 0 || static_cast<size_t>(index) >= sites.size() ||
      static_cast<size_t>(part) >= sites[index].size() || !sites[index][part])
    return "";
  return sites[index][part]->description;
}

// The generated code's entry points: the library first (float), im2col
// where it cannot run the site.

namespace {

/// F16 and Bf16: half storage, HalfConv.h's kernels.
template <typename T>
constexpr bool kIsHalf = !std::is_same_v<StoredAs<T>, T>;

/// The workspace must hold im2col's at least (the plan's rule).
template <typename T>
void checkWorkspace(const Conv2dShape &s, ConvPass pass,
                    size_t workspaceBytes) {
  const size_t need = conv2dWorkspaceElements(s, pass) * sizeof(T);
  if (workspaceBytes < need)
    throw KernelError(
        "a convolution's workspace of " + std::to_string(workspaceBytes) +
        " bytes is smaller than im2col's " + std::to_string(need));
}

} // namespace

template <typename T>
void conv2dForward(ConvLibrary &library, int site, const Conv2dShape &s,
                   ProductIn<T> x, ProductIn<T> w, ProductIn<T> bias,
                   ProductOut<T> y, StoredAs<T> *workspace,
                   size_t workspaceBytes) {
  if constexpr (kIsHalf<T>) {
    halfConv2dForward<T>(s, x, w, bias, y, reinterpret_cast<float *>(workspace),
                         workspaceBytes, &library, site);
  } else {
    checkWorkspace<T>(s, ConvPass::Forward, workspaceBytes);
    if constexpr (std::is_same_v<T, float>)
      if (library.forward(site, s, x, w, bias, y, workspace, workspaceBytes))
        return;
    conv2dForward(s, x, w, bias, y, workspace);
  }
}

template <typename T>
void conv2dBackwardInput(ConvLibrary &library, int site, const Conv2dShape &s,
                         ProductIn<T> dy, ProductIn<T> w, ProductIn<T> bias,
                         ProductOut<T> dx, StoredAs<T> *workspace,
                         size_t workspaceBytes) {
  if constexpr (kIsHalf<T>) {
    halfConv2dBackwardInput<T>(s, dy, w, bias, dx,
                               reinterpret_cast<float *>(workspace),
                               workspaceBytes, &library, site);
  } else {
    checkWorkspace<T>(s, ConvPass::BackwardInput, workspaceBytes);
    bool done = false;
    if constexpr (std::is_same_v<T, float>)
      done =
          library.backwardInput(site, s, dy, w, dx, workspace, workspaceBytes);
    if (!done)
      conv2dBackwardInput(s, dy, w, dx, workspace);
    if (bias)
      conv2dAddInputBias(s, bias, dx);
  }
}

template <typename T>
void conv2dBackwardWeight(ConvLibrary &library, int site, const Conv2dShape &s,
                          ProductIn<T> dy, ProductIn<T> x, ProductOut<T> dw,
                          ProductOut<T> dbias, StoredAs<T> *workspace,
                          size_t workspaceBytes) {
  if constexpr (kIsHalf<T>) {
    if (dbias)
      throw KernelError("a half convolution's bias gradient is a reduction "
                        "kernel of its own");
    halfConv2dBackwardWeight<T>(s, dy, x, dw,
                                reinterpret_cast<float *>(workspace),
                                workspaceBytes);
  } else {
    checkWorkspace<T>(s, ConvPass::BackwardWeight, workspaceBytes);
    if constexpr (std::is_same_v<T, float>)
      if (library.backwardWeight(site, s, dy, x, dw, workspace,
                                 workspaceBytes)) {
        if (dbias)
          conv2dBackwardBias(s, dy, dbias);
        return;
      }
    conv2dBackwardWeight(s, dy, x, dw, dbias, workspace);
  }
}

#define CAIRN_INSTANTIATE_CONV2D_SITES(T)                                      \
  template void conv2dForward<T>(ConvLibrary &, int, const Conv2dShape &,      \
                                 ProductIn<T>, ProductIn<T>, ProductIn<T>,     \
                                 ProductOut<T>, StoredAs<T> *, size_t);        \
  template void conv2dBackwardInput<T>(                                        \
      ConvLibrary &, int, const Conv2dShape &, ProductIn<T>, ProductIn<T>,     \
      ProductIn<T>, ProductOut<T>, StoredAs<T> *, size_t);                     \
  template void conv2dBackwardWeight<T>(                                       \
      ConvLibrary &, int, const Conv2dShape &, ProductIn<T>, ProductIn<T>,     \
      ProductOut<T>, ProductOut<T>, StoredAs<T> *, size_t);
CAIRN_INSTANTIATE_CONV2D_SITES(float)
CAIRN_INSTANTIATE_CONV2D_SITES(double)
CAIRN_INSTANTIATE_CONV2D_SITES(F16)
CAIRN_INSTANTIATE_CONV2D_SITES(Bf16)
#undef CAIRN_INSTANTIATE_CONV2D_SITES

} // namespace cairn::kernels
