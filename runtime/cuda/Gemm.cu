//===- Gemm.cu - Matrix products through cuBLASLt -------------------------===//
//
// gemm, batchedGemm and linearForward of Library.h, and librariesVersion().
//
// Only cuBLASLt: the legacy cuBLAS API allocates a workspace of its own,
// while every byte here comes from the memory plan. The arguments are those
// of the row-major kernels::gemm; cuBLASLt is column-major, and a row-major
// C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so the wrapper
// hands cuBLASLt the two operands swapped, each with its own leading
// dimension, and m and n exchanged. Nothing is copied or transposed.
//
// Math is fp32 (CUBLAS_COMPUTE_32F, which never uses TF32 on fp32 operands)
// or fp64; the half GEMMs read and write f16 or bf16 and accumulate in fp32
// (CUBLAS_COMPUTE_32F, fp32 alpha and beta: the tensor cores). Each
// call site keeps its matmul descriptor, layouts and algorithm: the first
// call asks cuBLASLt's heuristic for the algorithms that fit the planned
// workspace and the operands' actual alignment and keeps the first, in
// every mode. A fixed cuBLASLt algorithm gives the same bits on every run
// (its split-K reductions are ordered, not atomic), so --deterministic
// needs nothing more; timing GEMMs is left out. Everything the choice
// depends on (shapes, leading dimensions, strides, pointer alignment,
// workspace) is the site's key: a call that differs chooses again, unless
// the step is being captured, which may not choose.
//
// linearForward fuses bias and relu into the GEMM as its epilogue. Should
// cuBLASLt offer no algorithm with that epilogue for a shape, the site falls
// back to the bias broadcast into y first (beta = 1) and relu as a kernel
// after. Note the epilogue's relu maps NaN to 0, where the relu kernels keep
// it; that differs only once a pre-activation is already NaN.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Library.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Launch.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/KernelError.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>

namespace cairn::cuda {

namespace {

/// What a GEMM stores and computes in: `Stored` is the element in memory,
/// `Scalar` alpha, beta and the arithmetic of the fallback kernels.
template <typename T> struct LtTypes;
template <> struct LtTypes<float> {
  using Stored = float;
  using Scalar = float;
  static constexpr cudaDataType_t data = CUDA_R_32F;
  static constexpr cudaDataType_t scale = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  __device__ static Scalar load(Stored v) { return v; }
  __device__ static Stored store(Scalar v) { return v; }
};
template <> struct LtTypes<double> {
  using Stored = double;
  using Scalar = double;
  static constexpr cudaDataType_t data = CUDA_R_64F;
  static constexpr cudaDataType_t scale = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  __device__ static Scalar load(Stored v) { return v; }
  __device__ static Stored store(Scalar v) { return v; }
};
/// f16 or bf16 operands, fp32 accumulation (tensor cores) and scalars.
template <kernels::CastType Type> struct HalfTypes {
  static_assert(Type != kernels::CastType::F32, "a half type");
  using Stored = uint16_t;
  using Scalar = float;
  static constexpr cudaDataType_t data = Type == kernels::CastType::F16 ? CUDA_R_16F : CUDA_R_16BF;
  static constexpr cudaDataType_t scale = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  __device__ static Scalar load(Stored v) {
    return Type == kernels::CastType::F16 ? kernels::floatFromHalf(v)
                                          : kernels::floatFromBfloat16(v);
  }
  __device__ static Stored store(Scalar v) {
    return Type == kernels::CastType::F16 ? kernels::halfFromFloat(v)
                                          : kernels::bfloat16FromFloat(v);
  }
};

/// cuBLASLt's default assumption about operand alignment, and the most any
/// of its algorithms asks for.
constexpr uint32_t kMaxAlignment = 256;
/// The workspace is handed over 256-byte aligned, as cuBLAS asks of it.
constexpr uintptr_t kWorkspaceAlignment = 256;
/// Heuristic results asked for; the first that fits is kept.
constexpr int kHeuristicResults = 8;

/// The largest power of two dividing `bits`, capped at kMaxAlignment.
uint32_t alignmentOf(uint64_t bits) {
  if (bits == 0)
    return kMaxAlignment;
  return static_cast<uint32_t>(std::min<uint64_t>(bits & (~bits + 1), kMaxAlignment));
}

/// The alignment every matrix of a strided batch has.
uint32_t batchAlignment(const void *p, int64_t batch, int64_t stride, size_t elemBytes) {
  uint32_t a = alignmentOf(reinterpret_cast<uintptr_t>(p));
  if (batch > 1)
    a = std::min(a, alignmentOf(static_cast<uint64_t>(stride) * elemBytes));
  return a;
}

struct Workspace {
  void *data;
  size_t bytes;
};

Workspace alignWorkspace(void *workspace, size_t bytes) {
  if (!workspace || bytes == 0)
    return {nullptr, 0};
  const uintptr_t p = reinterpret_cast<uintptr_t>(workspace);
  const uintptr_t aligned = (p + kWorkspaceAlignment - 1) & ~(kWorkspaceAlignment - 1);
  const size_t skip = aligned - p;
  if (skip >= bytes)
    return {nullptr, 0};
  return {reinterpret_cast<void *>(aligned), bytes - skip};
}

/// One cuBLASLt problem in its own, column-major terms: D[rows, cols] =
/// op(A) op(B) with A the row-major B and B the row-major A. Everything the
/// chosen algorithm depends on, so equal problems share a choice.
struct Problem {
  cudaDataType_t type;
  int64_t batch;
  bool transA, transB;
  int64_t rows, cols, depth;
  int64_t lda, ldb, ldc;
  int64_t strideA, strideB, strideC;
  cublasLtEpilogue_t epilogue;
  uint32_t alignA, alignB, alignC, alignBias;
  size_t workspaceBytes;

  auto fields() const {
    return std::tie(type, batch, transA, transB, rows, cols, depth, lda, ldb, ldc, strideA, strideB,
                    strideC, epilogue, alignA, alignB, alignC, alignBias, workspaceBytes);
  }
  bool operator==(const Problem &other) const { return fields() == other.fields(); }
};

/// A call site's plan: descriptors and algorithm, decided on its first call.
class GemmSite final : public SiteState {
public:
  explicit GemmSite(const Problem &problem) : problem(problem) {}
  ~GemmSite() override {
    // Destruction cannot fail in a way worth reporting.
    if (c)
      cublasLtMatrixLayoutDestroy(c);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (op)
      cublasLtMatmulDescDestroy(op);
  }
  GemmSite(const GemmSite &) = delete;
  GemmSite &operator=(const GemmSite &) = delete;

  Problem problem;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo = {};
  /// linearForward: the epilogue runs inside the GEMM (else in kernels).
  bool fused = true;
};

class Preference {
public:
  Preference() { CAIRN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref)); }
  ~Preference() { cublasLtMatmulPreferenceDestroy(pref); }
  Preference(const Preference &) = delete;
  Preference &operator=(const Preference &) = delete;

  template <typename V> void set(cublasLtMatmulPreferenceAttributes_t attr, V value) {
    CAIRN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
  }
  cublasLtMatmulPreference_t get() const { return pref; }

private:
  cublasLtMatmulPreference_t pref = nullptr;
};

std::string siteName(const char *what, int site) {
  return std::string(what) + " (call site " + std::to_string(site) + ")";
}

void checkRange(const char *what, int site, const char *name, int64_t v, int64_t max) {
  if (v < 0 || v > max)
    throw kernels::KernelError(siteName(what, site) + ": " + name + " = " + std::to_string(v) +
                               " is out of cuBLASLt's range");
}

void makeLayout(cublasLtMatrixLayout_t &layout, cudaDataType_t type, int64_t rows, int64_t cols,
                int64_t ld, int64_t batch, int64_t stride) {
  CAIRN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(rows),
                                                static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    CAIRN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                        &count, sizeof(count)));
    CAIRN_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
}

void setEpilogue(GemmSite &site, cublasLtEpilogue_t epilogue, const void *bias) {
  CAIRN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(site.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                    &epilogue, sizeof(epilogue)));
  CAIRN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(site.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                    &bias, sizeof(bias)));
}

/// The first algorithm cuBLASLt's heuristic ranks that fits the workspace;
/// false when there is none.
bool chooseAlgorithm(Context &cx, GemmSite &site) {
  const Problem &p = site.problem;
  Preference pref;
  pref.set<uint64_t>(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, p.workspaceBytes);
  // The real alignment, so no algorithm that needs more is offered.
  pref.set<uint32_t>(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.alignA);
  pref.set<uint32_t>(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.alignB);
  pref.set<uint32_t>(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.alignC);
  pref.set<uint32_t>(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.alignC);
  cublasLtMatmulHeuristicResult_t results[kHeuristicResults] = {};
  int count = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(cx.blasLt, site.op, site.a, site.b, site.c, site.c, pref.get(),
                                     kHeuristicResults, results, &count);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED)
    return false;
  CAIRN_CUBLAS_CHECK(status);
  // Results come best first; the first is the choice in every mode.
  for (int i = 0; i < count; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= p.workspaceBytes) {
      site.algo = results[i].algo;
      return true;
    }
  return false;
}

/// The site's plan for `p`, made on the first call (or when the problem
/// changed). `bias` is the epilogue's bias pointer, whose alignment the
/// heuristic reads from the descriptor.
template <typename L>
GemmSite &siteFor(Context &cx, int siteId, const char *what, const Problem &p, const void *bias) {
  if (auto *site = dynamic_cast<GemmSite *>(cx.site(siteId)); site && site->problem == p)
    return *site;
  if (cx.capturing)
    throw kernels::KernelError(siteName(what, siteId) +
                               ": cuBLASLt algorithm not chosen before capture");
  auto site = std::make_unique<GemmSite>(p);
  CAIRN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&site->op, L::compute, L::scale));
  const cublasOperation_t opA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  CAIRN_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(site->op, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  CAIRN_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(site->op, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  // Stored shapes, before op: A is rows x depth after op, B depth x cols.
  makeLayout(site->a, p.type, p.transA ? p.depth : p.rows, p.transA ? p.rows : p.depth, p.lda,
             p.batch, p.strideA);
  makeLayout(site->b, p.type, p.transB ? p.cols : p.depth, p.transB ? p.depth : p.cols, p.ldb,
             p.batch, p.strideB);
  makeLayout(site->c, p.type, p.rows, p.cols, p.ldc, p.batch, p.strideC);
  setEpilogue(*site, p.epilogue, bias);
  bool found = chooseAlgorithm(cx, *site);
  if (!found && p.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    // No fused algorithm for this shape or type: plain GEMM, epilogue in
    // kernels.
    setEpilogue(*site, CUBLASLT_EPILOGUE_DEFAULT, nullptr);
    site->fused = false;
    found = chooseAlgorithm(cx, *site);
  }
  if (!found)
    throw kernels::KernelError(siteName(what, siteId) +
                               ": cuBLASLt has no algorithm for this GEMM within the planned "
                               "workspace of " +
                               std::to_string(p.workspaceBytes) + " bytes");
  GemmSite &result = *site;
  cx.setSite(siteId, std::move(site));
  return result;
}

/// C = beta C for the k == 0 products cuBLASLt does not take; beta == 0
/// overwrites, as in the BLAS.
template <typename L>
__global__ void scaleKernel(int64_t batch, int64_t m, int64_t n, typename L::Scalar beta,
                            typename L::Stored *c, int64_t ldc, int64_t strideC) {
  using Scalar = typename L::Scalar;
  CAIRN_GRID_STRIDE_LOOP(i, batch * m * n) {
    const int64_t col = i % n, rest = i / n;
    typename L::Stored &v = c[(rest / m) * strideC + (rest % m) * ldc + col];
    v = L::store(beta == Scalar(0) ? Scalar(0) : beta * L::load(v));
  }
}

/// y[r, o] = bias[o], or 0 without bias.
template <typename S>
__global__ void broadcastBiasKernel(int64_t rows, int64_t out, const S *bias, S *y) {
  // S(0) is +0 in every type, half bits included.
  CAIRN_GRID_STRIDE_LOOP(i, rows * out) { y[i] = bias ? bias[i % out] : S(0); }
}

/// y = max(y, 0) in place, NaN kept (as the relu kernels).
template <typename L> __global__ void reluKernel(int64_t n, typename L::Stored *y) {
  using Scalar = typename L::Scalar;
  CAIRN_GRID_STRIDE_LOOP(i, n) {
    if (L::load(y[i]) < Scalar(0))
      y[i] = L::store(Scalar(0));
  }
}

/// The cuBLASLt problem of the row-major product of kernels::batchedGemm.
template <typename L, typename T = typename L::Stored>
Problem problemFor(const char *what, int site, int64_t batch, bool transA, bool transB, int64_t m,
                   int64_t n, int64_t k, const T *a, int64_t strideA, int64_t lda, const T *b,
                   int64_t strideB, int64_t ldb, const T *c, int64_t strideC, int64_t ldc,
                   cublasLtEpilogue_t epilogue, const T *bias, size_t workspaceBytes) {
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  checkRange(what, site, "m", m, kMaxInt);
  checkRange(what, site, "n", n, kMaxInt);
  checkRange(what, site, "k", k, kMaxInt);
  checkRange(what, site, "batch", batch, kMaxInt);
  Problem p;
  p.type = L::data;
  p.batch = batch;
  // Column-major: A is the row-major B (n x k after op), B the row-major A.
  p.transA = transB;
  p.transB = transA;
  p.rows = n;
  p.cols = m;
  p.depth = k;
  p.lda = ldb;
  p.ldb = lda;
  p.ldc = ldc;
  p.strideA = batch > 1 ? strideB : 0;
  p.strideB = batch > 1 ? strideA : 0;
  p.strideC = batch > 1 ? strideC : 0;
  p.epilogue = epilogue;
  p.alignA = batchAlignment(b, batch, strideB, sizeof(T));
  p.alignB = batchAlignment(a, batch, strideA, sizeof(T));
  p.alignC = batchAlignment(c, batch, strideC, sizeof(T));
  p.alignBias = bias ? alignmentOf(reinterpret_cast<uintptr_t>(bias)) : 0;
  p.workspaceBytes = workspaceBytes;
  return p;
}

/// Runs the site's plan on these operands (row-major a, b and c).
template <typename L, typename T = typename L::Stored, typename A = typename L::Scalar>
void run(Context &cx, GemmSite &site, A alpha, const T *a, const T *b, A beta, T *c, const T *bias,
         const Workspace &ws) {
  // Pointers may move between calls as long as their alignment does not;
  // the bias pointer lives in the descriptor.
  if (site.fused && bias)
    CAIRN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(site.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                      &bias, sizeof(bias)));
  CAIRN_CUBLAS_CHECK(cublasLtMatmul(cx.blasLt, site.op, &alpha, b, site.a, a, site.b, &beta, c,
                                    site.c, c, site.c, &site.algo, ws.data, ws.bytes, cx.stream));
}

template <typename L, typename T = typename L::Stored, typename A = typename L::Scalar>
void batched(Context &cx, int site, const char *what, int64_t batch, bool transA, bool transB,
             int64_t m, int64_t n, int64_t k, A alpha, const T *a, int64_t lda, int64_t strideA,
             const T *b, int64_t ldb, int64_t strideB, A beta, T *c, int64_t ldc, int64_t strideC,
             void *workspace, size_t workspaceBytes) {
  if (batch > 1 && strideC == 0)
    throw kernels::KernelError(siteName(what, site) + ": strideC is 0, outputs would alias");
  if (batch <= 0 || m == 0 || n == 0)
    return;
  if (k == 0) {
    scaleKernel<L><<<blocksFor(batch * m * n), kThreadsPerBlock, 0, cx.stream>>>(batch, m, n, beta,
                                                                                 c, ldc, strideC);
    CAIRN_CUDA_CHECK_LAUNCH();
    return;
  }
  const Workspace ws = alignWorkspace(workspace, workspaceBytes);
  const Problem p =
      problemFor<L>(what, site, batch, transA, transB, m, n, k, a, strideA, lda, b, strideB, ldb, c,
                    strideC, ldc, CUBLASLT_EPILOGUE_DEFAULT, static_cast<const T *>(nullptr),
                    ws.bytes);
  run<L>(cx, siteFor<L>(cx, site, what, p, nullptr), alpha, a, b, beta, c,
         static_cast<const T *>(nullptr), ws);
}

/// linearForward on the types L.
template <typename L, typename T = typename L::Stored>
void linear(Context &cx, int site, const char *what, int64_t rows, int64_t in, int64_t out,
            const T *x, const T *w, const T *bias, bool relu, T *y, void *workspace,
            size_t workspaceBytes) {
  using A = typename L::Scalar;
  if (rows == 0 || out == 0)
    return;
  const unsigned blocks = blocksFor(rows * out);
  bool fused = false;
  if (in == 0) {
    // An empty product: y is the bias (or 0), then relu.
    broadcastBiasKernel<<<blocks, kThreadsPerBlock, 0, cx.stream>>>(rows, out, bias, y);
    CAIRN_CUDA_CHECK_LAUNCH();
  } else {
    const cublasLtEpilogue_t epilogue =
        bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
             : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    const Workspace ws = alignWorkspace(workspace, workspaceBytes);
    // y[rows, out] = x[rows, in] w[out, in]^T: row-major A = x, B = w^T.
    const Problem p = problemFor<L>(what, site, 1, false, true, rows, out, in, x, 0, in, w, 0, in,
                                    y, 0, out, epilogue, bias, ws.bytes);
    GemmSite &plan = siteFor<L>(cx, site, what, p, bias);
    fused = plan.fused;
    if (!fused && bias) {
      // Unfused: y = bias, then y += x w^T.
      broadcastBiasKernel<<<blocks, kThreadsPerBlock, 0, cx.stream>>>(rows, out, bias, y);
      CAIRN_CUDA_CHECK_LAUNCH();
    }
    run<L>(cx, plan, A(1), x, w, !fused && bias ? A(1) : A(0), y, fused ? bias : nullptr, ws);
  }
  if (relu && !fused) {
    reluKernel<L><<<blocks, kThreadsPerBlock, 0, cx.stream>>>(rows * out, y);
    CAIRN_CUDA_CHECK_LAUNCH();
  }
}

std::string versionText(size_t v) {
  // cuDNN 9 and cuBLAS encode major * 10000 + minor * 100 + patch; cuDNN 8
  // used major * 1000 + minor * 100 + patch.
  const size_t major = v >= 10000 ? v / 10000 : v / 1000;
  const size_t minor = v >= 10000 ? v % 10000 / 100 : v % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

} // namespace

template <typename T>
void gemm(Context &cx, int site, bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc,
          void *workspace, size_t workspaceBytes) {
  batched<LtTypes<T>>(cx, site, "gemm", 1, transA, transB, m, n, k, alpha, a, lda, 0, b, ldb, 0,
                      beta, c, ldc, 0, workspace, workspaceBytes);
}

template <typename T>
void batchedGemm(Context &cx, int site, int64_t batch, bool transA, bool transB, int64_t m,
                 int64_t n, int64_t k, T alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, T beta, T *c, int64_t ldc,
                 int64_t strideC, void *workspace, size_t workspaceBytes) {
  batched<LtTypes<T>>(cx, site, "batchedGemm", batch, transA, transB, m, n, k, alpha, a, lda,
                      strideA, b, ldb, strideB, beta, c, ldc, strideC, workspace, workspaceBytes);
}

template <typename T>
void linearForward(Context &cx, int site, int64_t rows, int64_t in, int64_t out, const T *x,
                   const T *w, const T *bias, bool relu, T *y, void *workspace,
                   size_t workspaceBytes) {
  linear<LtTypes<T>>(cx, site, "linearForward", rows, in, out, x, w, bias, relu, y, workspace,
                     workspaceBytes);
}

template <kernels::CastType Type>
void halfGemm(Context &cx, int site, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              float alpha, const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
              float beta, uint16_t *c, int64_t ldc, void *workspace, size_t workspaceBytes) {
  batched<HalfTypes<Type>>(cx, site, "halfGemm", 1, transA, transB, m, n, k, alpha, a, lda, 0, b,
                           ldb, 0, beta, c, ldc, 0, workspace, workspaceBytes);
}

template <kernels::CastType Type>
void halfBatchedGemm(Context &cx, int site, int64_t batch, bool transA, bool transB, int64_t m,
                     int64_t n, int64_t k, float alpha, const uint16_t *a, int64_t lda,
                     int64_t strideA, const uint16_t *b, int64_t ldb, int64_t strideB, float beta,
                     uint16_t *c, int64_t ldc, int64_t strideC, void *workspace,
                     size_t workspaceBytes) {
  batched<HalfTypes<Type>>(cx, site, "halfBatchedGemm", batch, transA, transB, m, n, k, alpha, a,
                           lda, strideA, b, ldb, strideB, beta, c, ldc, strideC, workspace,
                           workspaceBytes);
}

template <kernels::CastType Type>
void halfLinearForward(Context &cx, int site, int64_t rows, int64_t in, int64_t out,
                       const uint16_t *x, const uint16_t *w, const uint16_t *bias, bool relu,
                       uint16_t *y, void *workspace, size_t workspaceBytes) {
  linear<HalfTypes<Type>>(cx, site, "halfLinearForward", rows, in, out, x, w, bias, relu, y,
                          workspace, workspaceBytes);
}

const char *librariesVersion() {
  static const std::string text =
      "cuDNN " + versionText(cudnnGetVersion()) + ", cuBLASLt " + versionText(cublasLtGetVersion());
  return text.c_str();
}

#define CAIRN_INSTANTIATE(T)                                                                       \
  template void gemm<T>(Context &, int, bool, bool, int64_t, int64_t, int64_t, T, const T *,       \
                        int64_t, const T *, int64_t, T, T *, int64_t, void *, size_t);             \
  template void batchedGemm<T>(Context &, int, int64_t, bool, bool, int64_t, int64_t, int64_t, T,  \
                               const T *, int64_t, int64_t, const T *, int64_t, int64_t, T, T *,   \
                               int64_t, int64_t, void *, size_t);                                  \
  template void linearForward<T>(Context &, int, int64_t, int64_t, int64_t, const T *, const T *,  \
                                 const T *, bool, T *, void *, size_t);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

#define CAIRN_INSTANTIATE_HALF(TYPE)                                                               \
  template void halfGemm<TYPE>(Context &, int, bool, bool, int64_t, int64_t, int64_t, float,       \
                               const uint16_t *, int64_t, const uint16_t *, int64_t, float,        \
                               uint16_t *, int64_t, void *, size_t);                               \
  template void halfBatchedGemm<TYPE>(Context &, int, int64_t, bool, bool, int64_t, int64_t,       \
                                      int64_t, float, const uint16_t *, int64_t, int64_t,          \
                                      const uint16_t *, int64_t, int64_t, float, uint16_t *,       \
                                      int64_t, int64_t, void *, size_t);                           \
  template void halfLinearForward<TYPE>(Context &, int, int64_t, int64_t, int64_t,                 \
                                        const uint16_t *, const uint16_t *, const uint16_t *,      \
                                        bool, uint16_t *, void *, size_t);
CAIRN_INSTANTIATE_HALF(kernels::CastType::F16)
CAIRN_INSTANTIATE_HALF(kernels::CastType::BF16)
#undef CAIRN_INSTANTIATE_HALF

} // namespace cairn::cuda
