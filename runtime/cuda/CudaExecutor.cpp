//===- CudaExecutor.cpp - The arena on the GPU, the step as a graph -------===//
//
// See CudaBackend.h for what the executor promises. Everything that can fail
// while opening becomes an absl::Status with the device and the sizes in its
// message; failures inside a step arrive as KernelError (Check.h) and leave
// as InternalError.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaBackend.h"

#include "runtime/Arena.h"
#include "runtime/Metrics.h"
#include "runtime/Model.h"
#include "runtime/Tensor.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Context.h"
#include "runtime/cuda/Library.h"

#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace cairn::cuda {

namespace {

using runtime::ExecutorOptions;
using runtime::ProgramSpec;
using runtime::StepContext;
using runtime::StepKind;
using runtime::TensorInfo;
using runtime::TensorRole;

/// The sm_80 (A100) and sm_90 (H100, H200) code the executables carry, and
/// PTX that newer GPUs compile at load time.
constexpr int kMinComputeCapability = 80;
/// StepScalars' room past the arena, one alignment granule.
constexpr size_t kScalarBytes = runtime::Arena::kAlignment;
static_assert(sizeof(StepScalars) <= kScalarBytes);

/// Runs `body`, turning a KernelError from the CHECK macros into a Status.
template <typename Body> absl::Status guarded(const char *what, Body body) {
  try {
    body();
  } catch (const kernels::KernelError &e) {
    return absl::InternalError(absl::StrFormat("%s: %s", what, e.what()));
  }
  return absl::OkStatus();
}

/// Why no device can be used, in the user's terms.
absl::Status noDeviceError(cudaError_t status, int count) {
  if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice ||
      (status == cudaSuccess && count == 0))
    return absl::FailedPreconditionError(absl::StrFormat(
        "no CUDA device: this executable was built with --target cuda and needs an NVIDIA GPU "
        "(sm_80 or newer) with a driver for CUDA 13 (cudaGetDeviceCount: %s)",
        status == cudaSuccess ? "0 devices" : cudaGetErrorString(status)));
  return absl::FailedPreconditionError(
      absl::StrFormat("cannot use the CUDA device: cudaGetDeviceCount failed with error %d (%s: %s)",
                      static_cast<int>(status), cudaGetErrorName(status),
                      cudaGetErrorString(status)));
}

class CudaExecutor : public runtime::Executor {
public:
  static absl::StatusOr<std::unique_ptr<runtime::Executor>>
  open(const ProgramSpec &spec, const ExecutorOptions &options,
       const CollectiveHooks *collectives);
  ~CudaExecutor() override;

  const char *backend() const override { return "cuda"; }
  unsigned char *hostArena() override { return mirror; }
  absl::Status pushState() override;
  absl::Status pullState() override;
  absl::Status pullTensors(const std::vector<const TensorInfo *> &tensors) override {
    return copySome(tensors, false);
  }
  absl::Status pushTensors(const std::vector<const TensorInfo *> &tensors) override {
    return copySome(tensors, true);
  }
  absl::Status run(StepKind step, const StepContext &ctx) override;
  void fillReport(runtime::RunReport &report) const override;

private:
  explicit CudaExecutor(const ProgramSpec &spec) : spec(spec) {
    // What crosses between host and device, found once rather than per step.
    for (const TensorInfo &tensor : spec.tensors) {
      if (tensor.role == TensorRole::Input)
        inputs.push_back(&tensor);
      else if (tensor.role == TensorRole::Param || tensor.role == TensorRole::Buffer ||
               tensor.role == TensorRole::OptimizerState)
        state.push_back(&tensor);
      else if (tensor.role == TensorRole::Output) {
        for (StepKind kind : {StepKind::Train, StepKind::Forward, StepKind::EvalLoss})
          if (tensor.name == runtime::stepResultName(kind))
            results[static_cast<int>(kind)].push_back(&tensor);
        // The loss scaler's flag: the host counts skipped steps and sets the
        // next scale from it.
        if (tensor.name == "found_inf")
          results[static_cast<int>(StepKind::Train)].push_back(&tensor);
      }
    }
  }
  void initialize(const ExecutorOptions &options);
  /// Copies the persistent state in (toDevice) or out.
  void copyState(bool toDevice);
  void copyTensor(const TensorInfo &tensor, bool toDevice);
  /// Copies `tensors` in or out, with one synchronisation.
  absl::Status copySome(const std::vector<const TensorInfo *> &tensors, bool toDevice);
  void runStep(StepKind step, const StepContext &ctx);
  /// The step with ctx.observe: eager, each gradient copied to the mirror
  /// and handed on as host bytes.
  void runObserved(StepKind step, const StepContext &ctx);

  runtime::StepFunction function(StepKind step) const {
    return runtime::stepFunction(spec, step);
  }

  const ProgramSpec &spec;
  std::vector<const TensorInfo *> inputs, state;
  /// By step kind, what the host reads after the step: the training step's
  /// "loss" (and the loss scaler's "found_inf"), the forward pass's
  /// "output", the eval step's "eval_loss".
  std::vector<const TensorInfo *> results[runtime::kStepKinds];
  int device = 0;
  std::string deviceName;
  unsigned char *arena = nullptr;  // the one cudaMalloc
  size_t arenaAllocation = 0;
  unsigned char *mirror = nullptr; // host, std::aligned_alloc, untouched until used
  StepScalars *hostScalars = nullptr;   // pinned: written before each step
  StepScalars *deviceScalars = nullptr; // past the arena: what the kernels read
  Context cx;
  /// Closes cx.collectives (a program of several processes).
  void (*closeCollectives)(Context &) = nullptr;
  bool graphs = true;
  /// By step kind, then poison off/on: the first run is eager, the second
  /// captures, later ones replay.
  struct StepGraph {
    bool ranEagerly = false;
    cudaGraphExec_t exec = nullptr;
  };
  StepGraph stepGraphs[runtime::kStepKinds][2];
};

absl::StatusOr<std::unique_ptr<runtime::Executor>>
CudaExecutor::open(const ProgramSpec &spec, const ExecutorOptions &options,
                   const CollectiveHooks *collectives) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    return noDeviceError(status, count);
  std::unique_ptr<CudaExecutor> executor(new CudaExecutor(spec));
  // One GPU per process: the k-th rank on a host takes its k-th GPU.
  runtime::Transport *transport = options.transport;
  const bool several = collectives && transport && transport->size() > 1;
  if (several) {
    executor->device = transport->localRank();
    if (executor->device >= count)
      return absl::FailedPreconditionError(absl::StrFormat(
          "rank %d is rank %d among the processes on its host, which has %d CUDA device%s: "
          "launch at most %d process%s per host (one per GPU)",
          transport->rank(), executor->device, count, count == 1 ? "" : "s", count,
          count == 1 ? "" : "es"));
  }
  cudaDeviceProp properties;
  if (cudaGetDeviceProperties(&properties, executor->device) != cudaSuccess)
    return noDeviceError(cudaGetLastError(), count);
  int capability = properties.major * 10 + properties.minor;
  if (capability < kMinComputeCapability)
    return absl::FailedPreconditionError(absl::StrFormat(
        "the CUDA device %s is sm_%d; this executable needs sm_80 or newer", properties.name,
        capability));
  executor->deviceName = absl::StrFormat("%s (sm_%d, %d MiB)", properties.name, capability,
                                         properties.totalGlobalMem >> 20);
  // The arena first, so that a plan that does not fit says so plainly.
  if (absl::Status opened = guarded("opening the CUDA device", [&] {
        CAIRN_CUDA_CHECK(cudaSetDevice(executor->device));
        CAIRN_CUDA_CHECK(cudaFree(nullptr)); // creates the context
      });
      !opened.ok())
    return opened;
  executor->arenaAllocation =
      std::max<size_t>(runtime::Arena::kAlignment,
                       (spec.arenaBytes + runtime::Arena::kAlignment - 1) /
                           runtime::Arena::kAlignment * runtime::Arena::kAlignment);
  // The step scalars ride in the same allocation, past the planned bytes.
  if (cudaMalloc(&executor->arena, executor->arenaAllocation + kScalarBytes) !=
      cudaSuccess) {
    cudaGetLastError(); // clears the error
    size_t free = 0, total = 0;
    cudaMemGetInfo(&free, &total);
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cannot allocate the planned arena of %s on %s: %s of %s free (`cairn plan MODEL "
        "--fit SIZE` finds the largest batch that fits)",
        runtime::formatBytes(static_cast<double>(spec.arenaBytes)), executor->deviceName,
        runtime::formatBytes(static_cast<double>(free)),
        runtime::formatBytes(static_cast<double>(total))));
  }
  executor->mirror = static_cast<unsigned char *>(
      std::aligned_alloc(runtime::Arena::kAlignment, executor->arenaAllocation));
  if (!executor->mirror)
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cannot allocate the %d-byte host copy of the arena", executor->arenaAllocation));
  if (absl::Status initialized =
          guarded("setting up CUDA", [&] { executor->initialize(options); });
      !initialized.ok())
    return initialized;
  if (several) {
    // Every rank reaches this point once, in the same order of the run.
    if (absl::Status opened = collectives->open(executor->cx, *transport); !opened.ok())
      return opened;
    executor->closeCollectives = collectives->close;
    // NCCL's calls stay out of graph captures.
    executor->graphs = false;
  }
  return std::unique_ptr<runtime::Executor>(std::move(executor));
}

void CudaExecutor::initialize(const ExecutorOptions &options) {
  // The pattern makes the arena's high-water mark readable at the end.
  CAIRN_CUDA_CHECK(cudaMemset(arena, runtime::Arena::kPattern, arenaAllocation));
  CAIRN_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&hostScalars),
                                 sizeof(StepScalars), cudaHostAllocDefault));
  *hostScalars = StepScalars{};
  deviceScalars = reinterpret_cast<StepScalars *>(arena + arenaAllocation);
  cx.scalars = deviceScalars;
  CAIRN_CUDA_CHECK(cudaStreamCreateWithFlags(&cx.stream, cudaStreamNonBlocking));
  CAIRN_CUBLAS_CHECK(cublasLtCreate(&cx.blasLt));
  CAIRN_CUDNN_CHECK(cudnnCreate(&cx.dnn));
  CAIRN_CUDNN_CHECK(cudnnSetStream(cx.dnn, cx.stream));
  cx.deterministic = options.deterministic;
  cx.benchmark = options.benchmark && !options.deterministic;
  graphs = options.graphs;
  CAIRN_CUDA_CHECK(cudaDeviceSynchronize());
}

CudaExecutor::~CudaExecutor() {
  // Errors are ignored here: the process is ending, and a sticky CUDA error
  // has been reported already.
  if (closeCollectives)
    closeCollectives(cx);
  for (auto &byPoison : stepGraphs)
    for (StepGraph &graph : byPoison)
      if (graph.exec)
        cudaGraphExecDestroy(graph.exec);
  if (cx.dnn)
    cudnnDestroy(cx.dnn);
  if (cx.blasLt)
    cublasLtDestroy(cx.blasLt);
  if (cx.stream)
    cudaStreamDestroy(cx.stream);
  if (hostScalars)
    cudaFreeHost(hostScalars);
  if (arena)
    cudaFree(arena);
  std::free(mirror);
}

void CudaExecutor::copyTensor(const TensorInfo &tensor, bool toDevice) {
  size_t bytes = runtime::dtypeSize(tensor.dtype);
  for (int64_t extent : tensor.shape)
    bytes *= static_cast<size_t>(extent);
  if (toDevice)
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(arena + tensor.offset, mirror + tensor.offset, bytes,
                                     cudaMemcpyHostToDevice, cx.stream));
  else
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(mirror + tensor.offset, arena + tensor.offset, bytes,
                                     cudaMemcpyDeviceToHost, cx.stream));
}

void CudaExecutor::copyState(bool toDevice) {
  for (const TensorInfo *tensor : state)
    copyTensor(*tensor, toDevice);
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(cx.stream));
}

absl::Status CudaExecutor::pushState() {
  return guarded("copying the model's state to the GPU", [&] { copyState(true); });
}

absl::Status CudaExecutor::copySome(const std::vector<const TensorInfo *> &tensors,
                                   bool toDevice) {
  return guarded(toDevice ? "copying tensors to the GPU" : "copying tensors from the GPU", [&] {
    for (const TensorInfo *tensor : tensors)
      copyTensor(*tensor, toDevice);
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(cx.stream));
  });
}

absl::Status CudaExecutor::pullState() {
  return guarded("copying the model's state from the GPU", [&] { copyState(false); });
}

void CudaExecutor::runObserved(StepKind step, const StepContext &ctx) {
  struct Forward {
    CudaExecutor *self;
    const StepContext *user;
  } forward{this, &ctx};
  StepContext observed = ctx;
  observed.device = &cx;
  observed.observer = &forward;
  observed.observe = [](void *state, size_t index, const unsigned char *) {
    auto &f = *static_cast<Forward *>(state);
    f.self->copyTensor(f.self->spec.tensors.at(index), /*toDevice=*/false);
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(f.self->cx.stream));
    f.user->observe(f.user->observer, index, f.self->mirror);
  };
  function(step)(arena, observed);
}

void CudaExecutor::runStep(StepKind step, const StepContext &ctx) {
  // Written while the GPU is idle: the previous step ended with a sync.
  hostScalars->seed = ctx.seed;
  hostScalars->step = ctx.step;
  hostScalars->lrFactor = ctx.lrFactor;
  hostScalars->lossScale = ctx.lossScale;
  // Ahead of the step on its stream, outside the graph: every kernel then
  // reads device memory (reading mapped host memory, each thread crossed
  // PCIe: a dropout over 3 M elements took 5 ms).
  CAIRN_CUDA_CHECK(cudaMemcpyAsync(deviceScalars, hostScalars,
                                   sizeof(StepScalars), cudaMemcpyHostToDevice,
                                   cx.stream));
  for (const TensorInfo *tensor : inputs)
    copyTensor(*tensor, true);

  if (ctx.observe) {
    runObserved(step, ctx);
  } else {
    StepContext deviceContext = ctx;
    deviceContext.device = &cx;
    StepGraph &graph = stepGraphs[static_cast<int>(step)][ctx.poison];
    if (!graphs || !graph.ranEagerly) {
      // The first run chooses every call site's algorithm (cuDNN's Find
      // synchronises, which a capture may not).
      function(step)(arena, deviceContext);
      graph.ranEagerly = true;
    } else {
      if (!graph.exec) {
        cudaGraph_t captured = nullptr;
        CAIRN_CUDA_CHECK(cudaStreamBeginCapture(cx.stream, cudaStreamCaptureModeThreadLocal));
        cx.capturing = true;
        try {
          function(step)(arena, deviceContext);
        } catch (...) {
          cx.capturing = false;
          cudaStreamEndCapture(cx.stream, &captured);
          if (captured)
            cudaGraphDestroy(captured);
          throw;
        }
        cx.capturing = false;
        CAIRN_CUDA_CHECK(cudaStreamEndCapture(cx.stream, &captured));
        cudaError_t instantiated = cudaGraphInstantiate(&graph.exec, captured, 0);
        cudaGraphDestroy(captured);
        CAIRN_CUDA_CHECK(instantiated);
      }
      CAIRN_CUDA_CHECK(cudaGraphLaunch(graph.exec, cx.stream));
    }
  }

  for (const TensorInfo *result : results[static_cast<int>(step)])
    copyTensor(*result, false);
  // Also where an error of any kernel of the step surfaces.
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(cx.stream));
}

absl::Status CudaExecutor::run(StepKind step, const StepContext &ctx) {
  try {
    runStep(step, ctx);
  } catch (const kernels::KernelError &e) {
    return absl::InternalError(e.what());
  }
  return absl::OkStatus();
}

void CudaExecutor::fillReport(runtime::RunReport &report) const {
  report.backend = backend();
  report.device = absl::StrFormat("%s, %s", deviceName, librariesVersion());
  report.deviceArenaBytes = static_cast<int64_t>(arenaAllocation);
  // The high-water mark, read back from the device (the pattern method).
  std::vector<unsigned char> copy(spec.arenaBytes);
  if (!copy.empty() &&
      cudaMemcpy(copy.data(), arena, copy.size(), cudaMemcpyDeviceToHost) == cudaSuccess)
    report.measuredPeakBytes =
        runtime::highWaterMark(copy.data(), copy.size(), runtime::Arena::kPattern);
  // Everything else in use on the device: the context, cuBLASLt, cuDNN, the
  // graphs and the module's code (on a GPU shared with other processes,
  // theirs too).
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess && total - free >= arenaAllocation)
    report.deviceOverheadBytes = static_cast<int64_t>(total - free - arenaAllocation);
  cudaGetLastError();
}

} // namespace

std::string describeCudaBuild() {
  int runtimeVersion = 0;
  cudaRuntimeGetVersion(&runtimeVersion);
  return absl::StrFormat("CUDA runtime %d.%d (sm_80, sm_90)", runtimeVersion / 1000,
                         runtimeVersion % 1000 / 10);
}

absl::StatusOr<std::unique_ptr<runtime::Executor>>
openCudaExecutor(const ProgramSpec &spec, const ExecutorOptions &options,
                 const CollectiveHooks *collectives) {
  return CudaExecutor::open(spec, options, collectives);
}

namespace {

absl::StatusOr<std::unique_ptr<runtime::Executor>> openAlone(const ProgramSpec &spec,
                                                             const ExecutorOptions &options) {
  return CudaExecutor::open(spec, options, nullptr);
}

} // namespace

const runtime::Backend kCudaBackend = {"cuda", nullptr, describeCudaBuild, openAlone};

} // namespace cairn::cuda
