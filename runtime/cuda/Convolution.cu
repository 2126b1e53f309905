//===- Convolution.cu - NCHW convolutions through cuDNN -------------------===//
//
// conv2dForward, conv2dBackwardInput and conv2dBackwardWeight of Library.h
// through cuDNN's legacy convolution API (cudnnConvolutionForward,
// BackwardData, BackwardFilter), which runs a chosen algorithm in the
// workspace it is given and allocates nothing. Groups go to the convolution
// descriptor; the bias is added with cudnnAddTensor and its gradient taken
// with cudnnConvolutionBackwardBias, both deterministic.
//
// fp32 convolutions use CUDNN_FMA_MATH: CUDNN_DEFAULT_MATH lets cuDNN run
// fp32 on TF32 tensor cores from Ampere on. fp64 keeps the default (its
// tensor-core path is full fp64). The half convolutions (halfConv2dForward,
// halfConv2dBackwardInput) take f16 or bf16 tensors and accumulate in fp32
// (a float convolution descriptor) on the tensor cores, rounding the product
// to half once; the forward's bias is added to that half product by a kernel
// of ours, in fp32, and rounded again, as PyTorch's half convolution adds
// its bias. (cuDNN's own blend, beta = 1 over the bias broadcast into y,
// was measured to round the bf16 product first as well, 2026-11-27 on an
// H200; ours says what it does.) Half weight gradients are not here: the
// compiler computes them in float32 (passes/LoweringTargets.cpp).
//
// The algorithm is chosen on a site's first call, which is never captured
// (the executor runs one step eagerly first), among those whose workspace
// fits the bytes the plan gave the site:
//  - cx.benchmark && !cx.deterministic: cudnnFind*AlgorithmEx times them
//    on the real buffers and the fastest is kept, as PyTorch's
//    cudnn.benchmark. It writes the output buffer, which the real call then
//    overwrites.
//  - otherwise cuDNN's heuristics (cudnnGet*Algorithm_v7) rank them and the
//    first is kept, only among deterministic ones with cx.deterministic.
// A weight gradient none of whose algorithms fits (cuDNN's deterministic
// ones often want more than the plan's im2col-sized workspace) runs Cairn's
// own kernel, conv2dBackwardWeightDirect: the plan stays what it is and
// --deterministic works on every model.
// Descriptors and algorithm live in the site state; later calls, and the
// graph that replays them, run that algorithm.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Library.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Launch.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/KernelError.h"

#include <cudnn.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace cairn::cuda {

namespace {

using kernels::Conv2dShape;
using kernels::KernelError;

/// What a convolution stores and computes in: `value` the tensors' type,
/// `compute` the convolution descriptor's (the accumulation), `math` the
/// math type the descriptors start with, `Scalar` alpha and beta.
template <typename T> struct DnnType;
template <> struct DnnType<float> {
  using Stored = float;
  using Scalar = float;
  static constexpr cudnnDataType_t value = CUDNN_DATA_FLOAT;
  static constexpr cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  /// No TF32: FMA kernels only.
  static constexpr cudnnMathType_t math = CUDNN_FMA_MATH;
};
template <> struct DnnType<double> {
  using Stored = double;
  using Scalar = double;
  static constexpr cudnnDataType_t value = CUDNN_DATA_DOUBLE;
  static constexpr cudnnDataType_t compute = CUDNN_DATA_DOUBLE;
  static constexpr cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
/// f16 or bf16 tensors accumulated in fp32 (cuDNN's PSEUDO_HALF and
/// PSEUDO_BFLOAT16 configurations), on the tensor cores.
template <kernels::CastType Type> struct HalfDnnType {
  using Stored = uint16_t;
  using Scalar = float;
  static constexpr cudnnDataType_t value =
      Type == kernels::CastType::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  static constexpr cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  static constexpr cudnnMathType_t math = CUDNN_TENSOR_OP_MATH;
};

/// The math types an algorithm may run in: for fp32 only FMA (anything else
/// may be TF32), for fp64 and half any.
template <typename D> bool mathTypeAllowed(cudnnMathType_t math) {
  return D::value != CUDNN_DATA_FLOAT || math == CUDNN_FMA_MATH;
}

enum class Direction { Forward, BackwardData, BackwardFilter };

const char *directionName(Direction d) {
  switch (d) {
  case Direction::Forward:
    return "conv2dForward";
  case Direction::BackwardData:
    return "conv2dBackwardInput";
  case Direction::BackwardFilter:
    return "conv2dBackwardWeight";
  }
  return "conv2d";
}

std::string siteName(Direction d, int site) {
  return std::string(directionName(d)) + " (call site " + std::to_string(site) + ")";
}

/// Everything a site's descriptors and algorithm depend on.
struct Key {
  Conv2dShape s;
  cudnnDataType_t type;
  Direction direction;
  size_t workspaceBytes;

  auto fields() const {
    return std::tie(s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw,
                    s.groups, s.ho, s.wo, type, direction, workspaceBytes);
  }
  bool operator==(const Key &other) const { return fields() == other.fields(); }
};

class ConvSite final : public SiteState {
public:
  explicit ConvSite(const Key &key) : key(key) {}
  ~ConvSite() override {
    // Destruction cannot fail in a way worth reporting.
    if (conv)
      cudnnDestroyConvolutionDescriptor(conv);
    if (w)
      cudnnDestroyFilterDescriptor(w);
    if (bias)
      cudnnDestroyTensorDescriptor(bias);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (x)
      cudnnDestroyTensorDescriptor(x);
  }
  ConvSite(const ConvSite &) = delete;
  ConvSite &operator=(const ConvSite &) = delete;

  Key key;
  /// x: the input (dx), y: the output (dy), bias: [1, o, 1, 1].
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  /// A cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t, by direction.
  int algo = 0;
};

int toInt(Direction d, int site, const char *name, int64_t v) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw KernelError(siteName(d, site) + ": " + name + " = " + std::to_string(v) +
                      " is out of cuDNN's range");
  return static_cast<int>(v);
}

void makeTensor(cudnnTensorDescriptor_t &desc, cudnnDataType_t type, int n, int c, int h, int w) {
  CAIRN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc));
  CAIRN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, type, n, c, h, w));
}

/// The descriptors of a site; the algorithm is chosen by the caller.
template <typename D> std::unique_ptr<ConvSite> makeSite(const Key &key, int siteId) {
  const Conv2dShape &s = key.s;
  const Direction d = key.direction;
  if (s.groups <= 0 || s.c % s.groups != 0 || s.o % s.groups != 0)
    throw KernelError(siteName(d, siteId) + ": " + std::to_string(s.groups) +
                      " groups do not divide " + std::to_string(s.c) + " input and " +
                      std::to_string(s.o) + " output channels");
  // cuDNN's legacy descriptors index with int: whole tensors must fit.
  toInt(d, siteId, "input elements", s.n * s.c * s.h * s.w);
  toInt(d, siteId, "output elements", s.n * s.o * s.ho * s.wo);
  toInt(d, siteId, "weight elements", s.o * (s.c / s.groups) * s.kh * s.kw);
  auto site = std::make_unique<ConvSite>(key);
  const cudnnDataType_t type = D::value;
  const int n = toInt(d, siteId, "n", s.n), o = toInt(d, siteId, "o", s.o);
  makeTensor(site->x, type, n, toInt(d, siteId, "c", s.c), toInt(d, siteId, "h", s.h),
             toInt(d, siteId, "w", s.w));
  makeTensor(site->y, type, n, o, toInt(d, siteId, "ho", s.ho), toInt(d, siteId, "wo", s.wo));
  makeTensor(site->bias, type, 1, o, 1, 1);
  CAIRN_CUDNN_CHECK(cudnnCreateFilterDescriptor(&site->w));
  CAIRN_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      site->w, type, CUDNN_TENSOR_NCHW, o, static_cast<int>(s.c / s.groups),
      toInt(d, siteId, "kh", s.kh), toInt(d, siteId, "kw", s.kw)));
  CAIRN_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&site->conv));
  CAIRN_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      site->conv, toInt(d, siteId, "ph", s.ph), toInt(d, siteId, "pw", s.pw),
      toInt(d, siteId, "sh", s.sh), toInt(d, siteId, "sw", s.sw), toInt(d, siteId, "dh", s.dh),
      toInt(d, siteId, "dw", s.dw), CUDNN_CROSS_CORRELATION, D::compute));
  CAIRN_CUDNN_CHECK(
      cudnnSetConvolutionGroupCount(site->conv, toInt(d, siteId, "groups", s.groups)));
  CAIRN_CUDNN_CHECK(cudnnSetConvolutionMathType(site->conv, D::math));
  // The output size is the compiler's; cuDNN must agree, or the shape is
  // not the convolution the descriptors describe.
  int on = 0, oc = 0, oh = 0, ow = 0;
  CAIRN_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(site->conv, site->x, site->w, &on, &oc, &oh, &ow));
  if (on != s.n || oc != s.o || oh != s.ho || ow != s.wo)
    throw KernelError(siteName(d, siteId) + ": output " + std::to_string(s.ho) + "x" +
                      std::to_string(s.wo) + " does not match cuDNN's " + std::to_string(oh) + "x" +
                      std::to_string(ow));
  return site;
}

/// The buffers of one call: the two operands and the output.
struct Buffers {
  const void *in0, *in1;
  void *out;
};

// The three directions differ only in the entry points they call.
struct ForwardApi {
  /// Cairn's own kernel runs where no cuDNN algorithm fits (the forward
  /// and the input gradient always have a workspace-free implicit GEMM).
  static constexpr bool kHasDirectKernel = false;
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static int maxCount(cudnnHandle_t h) {
    int count = 0;
    CAIRN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    return count;
  }
  static void heuristics(cudnnHandle_t h, const ConvSite &s, int requested, int *returned,
                         Perf *perf) {
    CAIRN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, s.x, s.w, s.conv, s.y, requested,
                                                             returned, perf));
  }
  /// in0 = x, in1 = w, out = y.
  static void find(cudnnHandle_t h, const ConvSite &s, const Buffers &b, int requested,
                   int *returned, Perf *perf, void *ws, size_t bytes) {
    CAIRN_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
        h, s.x, b.in0, s.w, b.in1, s.conv, s.y, b.out, requested, returned, perf, ws, bytes));
  }
  static cudnnStatus_t workspaceSize(cudnnHandle_t h, const ConvSite &s, Algo algo, size_t *bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, s.x, s.w, s.conv, s.y, algo, bytes);
  }
};

struct BackwardDataApi {
  static constexpr bool kHasDirectKernel = false;
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static int maxCount(cudnnHandle_t h) {
    int count = 0;
    CAIRN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
    return count;
  }
  static void heuristics(cudnnHandle_t h, const ConvSite &s, int requested, int *returned,
                         Perf *perf) {
    CAIRN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s.w, s.y, s.conv, s.x,
                                                                  requested, returned, perf));
  }
  /// in0 = w, in1 = dy, out = dx.
  static void find(cudnnHandle_t h, const ConvSite &s, const Buffers &b, int requested,
                   int *returned, Perf *perf, void *ws, size_t bytes) {
    CAIRN_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
        h, s.w, b.in0, s.y, b.in1, s.conv, s.x, b.out, requested, returned, perf, ws, bytes));
  }
  static cudnnStatus_t workspaceSize(cudnnHandle_t h, const ConvSite &s, Algo algo, size_t *bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, s.w, s.y, s.conv, s.x, algo, bytes);
  }
};

struct BackwardFilterApi {
  static constexpr bool kHasDirectKernel = true;
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static int maxCount(cudnnHandle_t h) {
    int count = 0;
    CAIRN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
    return count;
  }
  static void heuristics(cudnnHandle_t h, const ConvSite &s, int requested, int *returned,
                         Perf *perf) {
    CAIRN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, s.x, s.y, s.conv, s.w,
                                                                    requested, returned, perf));
  }
  /// in0 = x, in1 = dy, out = dw.
  static void find(cudnnHandle_t h, const ConvSite &s, const Buffers &b, int requested,
                   int *returned, Perf *perf, void *ws, size_t bytes) {
    CAIRN_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
        h, s.x, b.in0, s.y, b.in1, s.conv, s.w, b.out, requested, returned, perf, ws, bytes));
  }
  static cudnnStatus_t workspaceSize(cudnnHandle_t h, const ConvSite &s, Algo algo, size_t *bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, s.x, s.y, s.conv, s.w, algo, bytes);
  }
};

/// site.algo of a weight-gradient site that runs Cairn's own kernel
/// (conv2dBackwardWeightDirect) because no cuDNN algorithm fits.
constexpr int kDirectAlgorithm = -1;

/// Sets site.algo (and the matching math type on site.conv): cuDNN's best
/// that fits the workspace, else Cairn's own kernel where the direction has
/// one (the weight gradient), else throws.
template <typename Api, typename D>
void chooseAlgorithm(Context &cx, ConvSite &site, int siteId, const Buffers &buffers,
                     void *workspace, size_t workspaceBytes) {
  const int requested = Api::maxCount(cx.dnn);
  std::vector<typename Api::Perf> perf(requested > 0 ? requested : 1);
  int returned = 0;
  const bool timed = cx.benchmark && !cx.deterministic;
  if (timed)
    Api::find(cx.dnn, site, buffers, requested, &returned, perf.data(), workspace, workspaceBytes);
  else
    Api::heuristics(cx.dnn, site, requested, &returned, perf.data());
  // Results come best first (fastest measured, or best ranked).
  for (int i = 0; i < returned; ++i) {
    const typename Api::Perf &p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > workspaceBytes ||
        !mathTypeAllowed<D>(p.mathType) ||
        (cx.deterministic && p.determinism != CUDNN_DETERMINISTIC))
      continue;
    // cuDNN picks kernels by algorithm and math type together.
    CAIRN_CUDNN_CHECK(cudnnSetConvolutionMathType(site.conv, p.mathType));
    size_t need = 0;
    if (Api::workspaceSize(cx.dnn, site, p.algo, &need) != CUDNN_STATUS_SUCCESS ||
        need > workspaceBytes)
      continue;
    site.algo = static_cast<int>(p.algo);
    return;
  }
  if (Api::kHasDirectKernel) {
    site.algo = kDirectAlgorithm;
    return;
  }
  throw KernelError(siteName(site.key.direction, siteId) + ": no cuDNN " +
                    (cx.deterministic ? "deterministic " : "") +
                    "algorithm fits the planned workspace of " + std::to_string(workspaceBytes) +
                    " bytes");
}

/// The site's descriptors and algorithm, decided on its first call.
template <typename Api, typename D>
ConvSite &siteFor(Context &cx, int siteId, const Key &key, const Buffers &buffers, void *workspace,
                  size_t workspaceBytes) {
  if (auto *site = dynamic_cast<ConvSite *>(cx.site(siteId)); site && site->key == key)
    return *site;
  if (cx.capturing)
    throw KernelError(siteName(key.direction, siteId) +
                      ": cuDNN algorithm not chosen before capture");
  std::unique_ptr<ConvSite> site = makeSite<D>(key, siteId);
  chooseAlgorithm<Api, D>(cx, *site, siteId, buffers, workspace, workspaceBytes);
  ConvSite &result = *site;
  cx.setSite(siteId, std::move(site));
  return result;
}

bool hasZeroDim(const Conv2dShape &s) {
  return s.n == 0 || s.c == 0 || s.h == 0 || s.w == 0 || s.o == 0 || s.kh == 0 || s.kw == 0 ||
         s.ho == 0 || s.wo == 0;
}

/// y[i, o, p] += bias[o] on half values, the sum in fp32 rounded to half.
template <kernels::CastType Type>
__global__ void addChannelBias(int64_t n, int64_t channels, int64_t spatial,
                               const uint16_t *bias, uint16_t *y) {
  CAIRN_GRID_STRIDE_LOOP(i, n * channels * spatial) {
    const uint16_t b = bias[(i / spatial) % channels];
    if constexpr (Type == kernels::CastType::F16)
      y[i] = kernels::halfFromFloat(kernels::floatFromHalf(y[i]) + kernels::floatFromHalf(b));
    else
      y[i] = kernels::bfloat16FromFloat(kernels::floatFromBfloat16(y[i]) +
                                        kernels::floatFromBfloat16(b));
  }
}

/// y[i, c, p] = bias[c]: a transposed convolution's output before cuDNN
/// adds its product to it (beta 1), so a half sum is rounded once. (cuDNN's
/// bias descriptors are the forward's output channels, not these.)
template <typename E>
__global__ void fillChannelBias(int64_t n, int64_t channels, int64_t spatial,
                                const E *bias, E *y) {
  CAIRN_GRID_STRIDE_LOOP(i, n * channels * spatial) {
    y[i] = bias[(i / spatial) % channels];
  }
}

/// Seeds dx with a transposed convolution's bias (none: nothing), and says
/// the beta that blends cuDNN's backward data onto it.
template <typename E>
const void *seedWithBias(Context &cx, const Conv2dShape &s, const E *bias,
                         E *dx, const void *one, const void *zero) {
  if (!bias)
    return zero;
  const int64_t inputs = s.n * s.c * s.h * s.w;
  fillChannelBias<E><<<blocksFor(inputs), kThreadsPerBlock, 0, cx.stream>>>(
      s.n, s.c, s.h * s.w, bias, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
  return one;
}

/// cuDNN takes no empty tensors; with one, every output element is an empty
/// sum: 0.
void zeroOutput(Context &cx, void *out, int64_t elements, size_t elemBytes) {
  if (out && elements > 0)
    CAIRN_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(elements) * elemBytes, cx.stream));
}

} // namespace

template <typename T>
void conv2dForward(Context &cx, int site, const Conv2dShape &s, const T *x, const T *w,
                   const T *bias, T *y, void *workspace, size_t workspaceBytes) {
  if (hasZeroDim(s)) {
    if (bias && s.n * s.o * s.ho * s.wo > 0)
      throw KernelError(siteName(Direction::Forward, site) + ": empty input with a bias");
    zeroOutput(cx, y, s.n * s.o * s.ho * s.wo, sizeof(T));
    return;
  }
  const Key key{s, DnnType<T>::value, Direction::Forward, workspaceBytes};
  ConvSite &plan =
      siteFor<ForwardApi, DnnType<T>>(cx, site, key, Buffers{x, w, y}, workspace, workspaceBytes);
  const T one = 1, zero = 0;
  CAIRN_CUDNN_CHECK(cudnnConvolutionForward(cx.dnn, &one, plan.x, x, plan.w, w, plan.conv,
                                            static_cast<cudnnConvolutionFwdAlgo_t>(plan.algo),
                                            workspace, workspaceBytes, &zero, plan.y, y));
  if (bias)
    CAIRN_CUDNN_CHECK(cudnnAddTensor(cx.dnn, &one, plan.bias, bias, &one, plan.y, y));
}

template <typename T>
void conv2dBackwardInput(Context &cx, int site, const Conv2dShape &s,
                         const T *dy, const T *w, const T *bias, T *dx,
                         void *workspace, size_t workspaceBytes) {
  if (hasZeroDim(s)) {
    if (bias && s.n * s.c * s.h * s.w > 0)
      throw KernelError(siteName(Direction::BackwardData, site) +
                        ": empty input with a bias");
    zeroOutput(cx, dx, s.n * s.c * s.h * s.w, sizeof(T));
    return;
  }
  const Key key{s, DnnType<T>::value, Direction::BackwardData, workspaceBytes};
  ConvSite &plan =
      siteFor<BackwardDataApi, DnnType<T>>(cx, site, key, Buffers{w, dy, dx}, workspace,
                                           workspaceBytes);
  const T one = 1, zero = 0;
  const void *beta = seedWithBias(cx, s, bias, dx, &one, &zero);
  CAIRN_CUDNN_CHECK(cudnnConvolutionBackwardData(
      cx.dnn, &one, plan.w, w, plan.y, dy, plan.conv,
      static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algo), workspace,
      workspaceBytes, beta, plan.x, dx));
}

template <typename T>
void conv2dBackwardWeight(Context &cx, int site, const Conv2dShape &s, const T *dy, const T *x,
                          T *dw, T *dbias, void *workspace, size_t workspaceBytes) {
  if (hasZeroDim(s)) {
    zeroOutput(cx, dw, s.o * (s.groups > 0 ? s.c / s.groups : 0) * s.kh * s.kw, sizeof(T));
    zeroOutput(cx, dbias, s.o, sizeof(T));
    return;
  }
  const Key key{s, DnnType<T>::value, Direction::BackwardFilter, workspaceBytes};
  ConvSite &plan =
      siteFor<BackwardFilterApi, DnnType<T>>(cx, site, key, Buffers{x, dy, dw}, workspace,
                                             workspaceBytes);
  const T one = 1, zero = 0;
  if (plan.algo == kDirectAlgorithm)
    conv2dBackwardWeightDirect<T>(cx, s, dy, x, dw, workspace, workspaceBytes);
  else
    CAIRN_CUDNN_CHECK(
      cudnnConvolutionBackwardFilter(cx.dnn, &one, plan.x, x, plan.y, dy, plan.conv,
                                     static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan.algo),
                                     workspace, workspaceBytes, &zero, plan.w, dw));
  if (dbias)
    CAIRN_CUDNN_CHECK(
        cudnnConvolutionBackwardBias(cx.dnn, &one, plan.y, dy, &zero, plan.bias, dbias));
}

template <kernels::CastType Type>
void halfConv2dForward(Context &cx, int site, const Conv2dShape &s, const uint16_t *x,
                       const uint16_t *w, const uint16_t *bias, uint16_t *y, void *workspace,
                       size_t workspaceBytes) {
  using D = HalfDnnType<Type>;
  if (hasZeroDim(s)) {
    if (bias && s.n * s.o * s.ho * s.wo > 0)
      throw KernelError(siteName(Direction::Forward, site) + ": empty input with a bias");
    zeroOutput(cx, y, s.n * s.o * s.ho * s.wo, sizeof(uint16_t));
    return;
  }
  const Key key{s, D::value, Direction::Forward, workspaceBytes};
  ConvSite &plan =
      siteFor<ForwardApi, D>(cx, site, key, Buffers{x, w, y}, workspace, workspaceBytes);
  const float one = 1, zero = 0;
  CAIRN_CUDNN_CHECK(cudnnConvolutionForward(cx.dnn, &one, plan.x, x, plan.w, w, plan.conv,
                                            static_cast<cudnnConvolutionFwdAlgo_t>(plan.algo),
                                            workspace, workspaceBytes, &zero, plan.y, y));
  if (bias) {
    const int64_t outputs = s.n * s.o * s.ho * s.wo;
    addChannelBias<Type><<<blocksFor(outputs), kThreadsPerBlock, 0, cx.stream>>>(
        s.n, s.o, s.ho * s.wo, bias, y);
    CAIRN_CUDA_CHECK_LAUNCH();
  }
}

template <kernels::CastType Type>
void halfConv2dBackwardInput(Context &cx, int site, const Conv2dShape &s,
                             const uint16_t *dy, const uint16_t *w,
                             const uint16_t *bias, uint16_t *dx,
                             void *workspace, size_t workspaceBytes) {
  using D = HalfDnnType<Type>;
  if (hasZeroDim(s)) {
    if (bias && s.n * s.c * s.h * s.w > 0)
      throw KernelError(siteName(Direction::BackwardData, site) +
                        ": empty input with a bias");
    zeroOutput(cx, dx, s.n * s.c * s.h * s.w, sizeof(uint16_t));
    return;
  }
  const Key key{s, D::value, Direction::BackwardData, workspaceBytes};
  ConvSite &plan =
      siteFor<BackwardDataApi, D>(cx, site, key, Buffers{w, dy, dx}, workspace, workspaceBytes);
  // The bias first, blended in with beta 1: cuDNN adds the product to it in
  // fp32 and rounds once, as the CPU's (HalfConv.h) and autocast's.
  const float one = 1, zero = 0;
  const void *beta = seedWithBias(cx, s, bias, dx, &one, &zero);
  CAIRN_CUDNN_CHECK(cudnnConvolutionBackwardData(
      cx.dnn, &one, plan.w, w, plan.y, dy, plan.conv,
      static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algo), workspace,
      workspaceBytes, beta, plan.x, dx));
}

#define CAIRN_INSTANTIATE(T)                                                   \
  template void conv2dForward<T>(Context &, int, const Conv2dShape &,          \
                                 const T *, const T *, const T *, T *, void *, \
                                 size_t);                                      \
  template void conv2dBackwardInput<T>(Context &, int, const Conv2dShape &,    \
                                       const T *, const T *, const T *, T *,   \
                                       void *, size_t);                        \
  template void conv2dBackwardWeight<T>(Context &, int, const Conv2dShape &,   \
                                        const T *, const T *, T *, T *,        \
                                        void *, size_t);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

#define CAIRN_INSTANTIATE_HALF(TYPE)                                           \
  template void halfConv2dForward<TYPE>(                                       \
      Context &, int, const Conv2dShape &, const uint16_t *, const uint16_t *, \
      const uint16_t *, uint16_t *, void *, size_t);                           \
  template void halfConv2dBackwardInput<TYPE>(                                 \
      Context &, int, const Conv2dShape &, const uint16_t *, const uint16_t *, \
      const uint16_t *, uint16_t *, void *, size_t);
CAIRN_INSTANTIATE_HALF(kernels::CastType::F16)
CAIRN_INSTANTIATE_HALF(kernels::CastType::BF16)
#undef CAIRN_INSTANTIATE_HALF

} // namespace cairn::cuda
