//===- RunMainTest.cpp - runMain end to end on a hand-written program -----===//
//
// The program is softmax regression written with plain loops: image
// f32[10, 1, 4, 4] -> output f32[10, 3], cross-entropy loss, SGD with
// momentum 0.9 and lr 0.5, a num_batches_tracked-like I64 buffer counting
// steps, and the gradients exposed as Gradient tensors. The data: three
// classes of 4x4 images, class c bright where pixel % 3 == c.
//
//===----------------------------------------------------------------------===//
#include "runtime/Npy.h"
#include "runtime/Program.h"
#include "runtime/Safetensors.h"
#include "runtime/kernels/KernelError.h"

#include "DataFiles.h"
#include "TestFiles.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

constexpr int64_t kBatch = 10, kPixels = 16, kClasses = 3;
constexpr float kLearningRate = 0.5f, kMomentum = 0.9f;

/// Arena offsets of the program's tensors, set by makeSpec.
struct Offsets {
  size_t image, label, weight, bias, count, weightMomentum, biasMomentum, weightGrad, biasGrad,
      output, loss;
} at;

template <typename T> T *in(unsigned char *arena, size_t offset) {
  return reinterpret_cast<T *>(arena + offset);
}

void forwardInto(unsigned char *arena, float *output) {
  const float *x = in<float>(arena, at.image), *w = in<float>(arena, at.weight),
              *b = in<float>(arena, at.bias);
  for (int64_t r = 0; r < kBatch; ++r)
    for (int64_t c = 0; c < kClasses; ++c) {
      float sum = b[c];
      for (int64_t k = 0; k < kPixels; ++k)
        sum += w[c * kPixels + k] * x[r * kPixels + k];
      output[r * kClasses + c] = sum;
    }
}

void forward(unsigned char *arena, const StepContext &) {
  forwardInto(arena, in<float>(arena, at.output));
}

/// spec.tensors indices of the gradients, for StepContext::observe.
constexpr size_t kWeightGradTensor = 7, kBiasGradTensor = 8;

void trainStep(unsigned char *arena, const StepContext &ctx) {
  float *logits = in<float>(arena, at.output);
  forwardInto(arena, logits);
  const float *x = in<float>(arena, at.image);
  const int64_t *label = in<int64_t>(arena, at.label);
  float *gw = in<float>(arena, at.weightGrad), *gb = in<float>(arena, at.biasGrad);
  std::memset(gw, 0, kClasses * kPixels * sizeof(float));
  std::memset(gb, 0, kClasses * sizeof(float));
  float loss = 0;
  for (int64_t r = 0; r < kBatch; ++r) {
    if (label[r] < 0 || label[r] >= kClasses)
      throw cairn::kernels::KernelError("cross_entropy: label out of range");
    float *row = logits + r * kClasses;
    float top = std::max({row[0], row[1], row[2]}), sum = 0;
    for (int64_t c = 0; c < kClasses; ++c)
      sum += std::exp(row[c] - top);
    loss += top + std::log(sum) - row[label[r]];
    for (int64_t c = 0; c < kClasses; ++c) {
      float g = (std::exp(row[c] - top) / sum - (c == label[r])) / kBatch;
      gb[c] += g;
      for (int64_t k = 0; k < kPixels; ++k)
        gw[c * kPixels + k] += g * x[r * kPixels + k];
    }
  }
  *in<float>(arena, at.loss) = loss / kBatch;
  // Gradients are reported when complete, as generated code does; with
  // poison their bytes die after the update.
  if (ctx.observe) {
    ctx.observe(ctx.observer, kWeightGradTensor, arena);
    ctx.observe(ctx.observer, kBiasGradTensor, arena);
  }
  auto update = [](float *param, float *momentum, const float *grad, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      momentum[i] = kMomentum * momentum[i] + grad[i];
      param[i] -= kLearningRate * momentum[i];
    }
  };
  update(in<float>(arena, at.weight), in<float>(arena, at.weightMomentum), gw,
         kClasses * kPixels);
  update(in<float>(arena, at.bias), in<float>(arena, at.biasMomentum), gb, kClasses);
  ++*in<int64_t>(arena, at.count);
  if (ctx.poison) {
    cairn::runtime::poisonBytes(arena + at.weightGrad, kClasses * kPixels * sizeof(float));
    cairn::runtime::poisonBytes(arena + at.biasGrad, kClasses * sizeof(float));
  }
}

ProgramSpec makeSpec() {
  ProgramSpec spec;
  spec.model = "SoftmaxRegression";
  spec.sourceFile = "softmax.cairn";
  spec.batch = kBatch;
  spec.optimizer = "SGD(lr=0.5, momentum=0.9)";
  spec.loss = {LossKind::CrossEntropy, "label", 0.0};
  spec.forwardInputs = {"image"};
  spec.trainStep = trainStep;
  spec.forward = forward;
  size_t top = 0;
  auto add = [&](const std::string &name, DType dtype, std::vector<int64_t> shape,
                 TensorRole role, InitKind init = InitKind::None, double scale = 0) {
    TensorInfo info;
    info.name = name;
    info.dtype = dtype;
    info.shape = shape;
    info.role = role;
    info.init = init;
    info.initScale = scale;
    info.offset = (top + 63) / 64 * 64;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    top = info.offset + static_cast<size_t>(n) * dtypeSize(dtype);
    spec.tensors.push_back(info);
    return info.offset;
  };
  at.image = add("image", DType::F32, {kBatch, 1, 4, 4}, TensorRole::Input);
  at.label = add("label", DType::I64, {kBatch}, TensorRole::Input);
  at.weight = add("fc.weight", DType::F32, {kClasses, kPixels}, TensorRole::Param,
                  InitKind::Uniform, 0.25);
  at.bias = add("fc.bias", DType::F32, {kClasses}, TensorRole::Param, InitKind::Uniform, 0.25);
  at.count = add("num_batches_tracked", DType::I64, {}, TensorRole::Buffer, InitKind::Zeros);
  at.weightMomentum = add("fc.weight.momentum_buffer", DType::F32, {kClasses, kPixels},
                          TensorRole::OptimizerState);
  at.biasMomentum =
      add("fc.bias.momentum_buffer", DType::F32, {kClasses}, TensorRole::OptimizerState);
  at.weightGrad = add("grad.fc.weight", DType::F32, {kClasses, kPixels}, TensorRole::Gradient);
  at.biasGrad = add("grad.fc.bias", DType::F32, {kClasses}, TensorRole::Gradient);
  EXPECT_EQ(spec.tensors[kWeightGradTensor].name, "grad.fc.weight");
  EXPECT_EQ(spec.tensors[kBiasGradTensor].name, "grad.fc.bias");
  at.output = add("output", DType::F32, {kBatch, kClasses}, TensorRole::Output);
  at.loss = add("loss", DType::F32, {}, TensorRole::Output);
  spec.arenaBytes = (top + 63) / 64 * 64;
  return spec;
}

/// `n` examples: class i % 3, pixels of the class bright, the rest dim.
std::pair<std::string, std::string> examples(int n, uint32_t seed) {
  std::string images, labels;
  uint32_t state = seed;
  auto noise = [&](uint32_t range) {
    state = state * 1664525u + 1013904223u;
    return (state >> 16) % range;
  };
  for (int i = 0; i < n; ++i) {
    int label = (i * 7 + i / 3) % 3;
    labels.push_back(char(label));
    for (int k = 0; k < kPixels; ++k)
      images.push_back(char(k % 3 == label ? 150 + noise(100) : noise(90)));
  }
  return {images, labels};
}

void writeData(const TempDir &dir) {
  auto [train, trainLabels] = examples(300, 1);
  writeGzip(dir.file("train-images-idx3-ubyte.gz"), idxFile(0x08, {300, 4, 4}, train));
  writeGzip(dir.file("train-labels-idx1-ubyte.gz"), idxFile(0x08, {300}, trainLabels));
  auto [test, testLabels] = examples(61, 2); // not a multiple of the batch
  writeBytes(dir.file("t10k-images-idx3-ubyte"), idxFile(0x08, {61, 4, 4}, test));
  writeBytes(dir.file("t10k-labels-idx1-ubyte"), idxFile(0x08, {61}, testLabels));
}

struct Result {
  int code;
  std::string out, err;
};

Result run(const ProgramSpec &spec, std::vector<std::string> args) {
  // The test binary must never exec itself over.
  setenv("CAIRN_NO_BLAS_REEXEC", "1", 1);
  args.insert(args.begin(), "softmax");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  int code = runMain(spec, static_cast<int>(args.size()), argv.data());
  Result result{code, testing::internal::GetCapturedStdout(),
                testing::internal::GetCapturedStderr()};
  return result;
}

nlohmann::json readJson(const std::string &path) {
  return nlohmann::json::parse(readBytes(path), nullptr, /*allow_exceptions=*/false);
}

std::vector<float> floatsOf(const HostTensor &tensor) {
  std::vector<float> values(tensor.bytes.size() / 4);
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

class RunMain : public testing::Test {
protected:
  void SetUp() override { writeData(data); }
  std::string file(const std::string &name) { return out.file(name); }

  /// Expects exit code 1 with one error line naming every fragment, and no
  /// output file left behind.
  void expectFailure(const std::vector<std::string> &args,
                     const std::vector<std::string> &fragments) {
    Result result = run(spec, args);
    EXPECT_EQ(result.code, 1) << result.err;
    EXPECT_NE(result.err.find("error: "), std::string::npos) << result.err;
    for (const std::string &fragment : fragments)
      EXPECT_NE(result.err.find(fragment), std::string::npos) << fragment << "\n" << result.err;
    for (const char *name : {"s.safetensors", "m.json", "o.safetensors"})
      EXPECT_FALSE(fileExists(file(name))) << name;
    for (const auto &entry : std::filesystem::directory_iterator(out.path))
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }

  ProgramSpec spec = makeSpec();
  TempDir data, out;
};

TEST_F(RunMain, TrainsEvaluatesAndReportsEveryMetric) {
  Result trained = run(spec, {"train", "--data", data.path, "--epochs", "3", "--seed", "1",
                              "--metrics", file("m.json"), "--save", file("w.safetensors"),
                              "--log-every", "10"});
  ASSERT_EQ(trained.code, 0) << trained.err;
  EXPECT_NE(trained.err.find("epoch 3/3  step 90/90"), std::string::npos) << trained.err;
  EXPECT_NE(trained.out.find("test accuracy"), std::string::npos) << trained.out;
  EXPECT_NE(trained.out.find("memory: arena"), std::string::npos) << trained.out;

  nlohmann::json m = readJson(file("m.json"));
  for (const char *key : {"model", "command", "epochs", "steps", "seconds",
                          "examples_per_second", "final_loss", "test_accuracy", "test_loss",
                          "planned_arena_bytes", "measured_peak_bytes", "peak_rss_bytes",
                          "blas_core", "threads", "seed"})
    EXPECT_TRUE(m.contains(key)) << key;
  EXPECT_EQ(m["model"], "SoftmaxRegression");
  EXPECT_EQ(m["command"], "train");
  EXPECT_EQ(m["epochs"], 3);
  EXPECT_EQ(m["steps"], 90);
  EXPECT_EQ(m["seed"], 1);
  EXPECT_GE(m["test_accuracy"].get<double>(), 0.95);
  EXPECT_LT(m["test_loss"].get<double>(), 0.3);
  EXPECT_LT(m["final_loss"].get<double>(), 0.3);
  EXPECT_EQ(m["planned_arena_bytes"], spec.arenaBytes);
  // "loss" is the topmost tensor: the peak lies within its four bytes.
  EXPECT_LE(m["measured_peak_bytes"].get<size_t>(), at.loss + 4);
  EXPECT_GT(m["measured_peak_bytes"].get<size_t>(), at.loss);
  EXPECT_GT(m["peak_rss_bytes"].get<int64_t>(), 0);

  absl::StatusOr<TensorMap> weights = loadSafetensors(file("w.safetensors"));
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_EQ(weights->size(), 5u); // params, the buffer and the momentum buffers
  int64_t count;
  std::memcpy(&count, weights->at("num_batches_tracked").bytes.data(), sizeof(count));
  EXPECT_EQ(count, 90);

  // The evaluation, redone here in double: every test example once, the
  // padding of the last batch ignored.
  std::vector<float> w = floatsOf(weights->at("fc.weight")), b = floatsOf(weights->at("fc.bias"));
  auto [pixels, labels] = examples(61, 2);
  int correct = 0;
  double lossSum = 0;
  for (int i = 0; i < 61; ++i) {
    double logits[kClasses];
    for (int64_t c = 0; c < kClasses; ++c) {
      float sum = b[c];
      for (int64_t k = 0; k < kPixels; ++k)
        sum += w[c * kPixels + k] *
               (static_cast<float>(static_cast<unsigned char>(pixels[i * kPixels + k])) / 255.0f);
      logits[c] = sum;
    }
    int64_t best = std::max_element(logits, logits + kClasses) - logits;
    correct += best == labels[i];
    double total = 0;
    for (double logit : logits)
      total += std::exp(logit - logits[best]);
    lossSum += logits[best] + std::log(total) - logits[int(labels[i])];
  }
  EXPECT_EQ(m["test_accuracy"].get<double>(), correct / 61.0);
  EXPECT_NEAR(m["test_loss"].get<double>(), lossSum / 61, 1e-9);

  Result evaluated = run(spec, {"eval", "--data", data.path, "--load", file("w.safetensors"),
                                "--metrics", file("e.json")});
  ASSERT_EQ(evaluated.code, 0) << evaluated.err;
  nlohmann::json e = readJson(file("e.json"));
  EXPECT_EQ(e["command"], "eval");
  EXPECT_EQ(e["test_accuracy"], m["test_accuracy"]);
  EXPECT_EQ(e["test_loss"], m["test_loss"]);
  EXPECT_TRUE(e["final_loss"].is_null());
}

TEST_F(RunMain, SameSeedSameWeightsAndStepsSpanEpochs) {
  for (const char *name : {"a.safetensors", "b.safetensors"})
    ASSERT_EQ(run(spec, {"train", "--data", data.path, "--steps", "45", "--seed", "3", "--save",
                         file(name), "--metrics", file("m.json")})
                  .code,
              0);
  EXPECT_EQ(readBytes(file("a.safetensors")), readBytes(file("b.safetensors")));
  nlohmann::json m = readJson(file("m.json"));
  EXPECT_EQ(m["steps"], 45);
  EXPECT_EQ(m["epochs"], 2);
  ASSERT_EQ(run(spec, {"train", "--data", data.path, "--steps", "45", "--seed", "4", "--save",
                       file("c.safetensors")})
                .code,
            0);
  EXPECT_NE(readBytes(file("a.safetensors")), readBytes(file("c.safetensors")));
}

TEST_F(RunMain, ContinuesFromACheckpointWithItsOptimizerState) {
  ASSERT_EQ(run(spec, {"train", "--data", data.path, "--steps", "5", "--save",
                       file("a.safetensors")})
                .code,
            0);
  std::map<std::string, std::string> metadata;
  ASSERT_TRUE(loadSafetensors(file("a.safetensors"), &metadata).ok());
  EXPECT_EQ(metadata["cairn.optimizer_steps"], "5");
  Result resumed = run(spec, {"train", "--data", data.path, "--steps", "5", "--load",
                              file("a.safetensors"), "--save", file("b.safetensors")});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  absl::StatusOr<TensorMap> b =
      loadSafetensors(file("b.safetensors"), &metadata);
  ASSERT_TRUE(b.ok());
  int64_t count;
  std::memcpy(&count, b->at("num_batches_tracked").bytes.data(), sizeof(count));
  EXPECT_EQ(count, 10);
  // The run counted on from the checkpoint's steps.
  EXPECT_EQ(metadata["cairn.optimizer_steps"], "10");
  // init writes a state_dict: no optimizer state, no step count.
  ASSERT_EQ(run(spec, {"init", "--save", file("i.safetensors")}).code, 0);
  metadata.clear();
  ASSERT_TRUE(loadSafetensors(file("i.safetensors"), &metadata).ok());
  EXPECT_FALSE(metadata.count("cairn.optimizer_steps"));
}

TEST_F(RunMain, InitAndStepWriteEveryTensor) {
  Result init = run(spec, {"init", "--seed", "2", "--save", file("init.safetensors")});
  ASSERT_EQ(init.code, 0) << init.err;
  absl::StatusOr<TensorMap> weights = loadSafetensors(file("init.safetensors"));
  ASSERT_TRUE(weights.ok()) << weights.status();
  // Exactly a state_dict: no optimizer state.
  std::vector<std::string> names;
  for (const auto &[name, tensor] : *weights)
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc.bias", "fc.weight", "num_batches_tracked"}));

  auto [pixels, labels] = examples(kBatch, 5);
  TensorMap batch;
  std::vector<float> image(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i)
    image[i] = static_cast<float>(static_cast<unsigned char>(pixels[i])) / 255.0f;
  std::vector<int64_t> label(labels.begin(), labels.end());
  batch["image"] = HostTensor{DType::F32, {kBatch, 1, 4, 4}, {}};
  batch["image"].bytes.resize(image.size() * 4);
  std::memcpy(batch["image"].bytes.data(), image.data(), image.size() * 4);
  batch["label"] = HostTensor{DType::I64, {kBatch}, {}};
  batch["label"].bytes.resize(label.size() * 8);
  std::memcpy(batch["label"].bytes.data(), label.data(), label.size() * 8);
  ASSERT_TRUE(saveSafetensors(file("batch.safetensors"), batch).ok());

  Result step = run(spec, {"step", "--load", file("init.safetensors"), "--batch",
                           file("batch.safetensors"), "--out", file("o.safetensors")});
  ASSERT_EQ(step.code, 0) << step.err;
  absl::StatusOr<TensorMap> got = loadSafetensors(file("o.safetensors"));
  ASSERT_TRUE(got.ok()) << got.status();
  for (const char *name : {"loss", "output", "grad.fc.weight", "grad.fc.bias", "fc.weight",
                           "fc.bias", "num_batches_tracked", "fc.weight.momentum_buffer",
                           "fc.bias.momentum_buffer"})
    EXPECT_TRUE(got->count(name)) << name;
  EXPECT_EQ(got->size(), 9u);

  // The output is the forward pass on the loaded weights.
  std::vector<float> w = floatsOf(weights->at("fc.weight")), b = floatsOf(weights->at("fc.bias"));
  std::vector<float> output = floatsOf(got->at("output"));
  for (int64_t r = 0; r < kBatch; ++r)
    for (int64_t c = 0; c < kClasses; ++c) {
      float sum = b[c];
      for (int64_t k = 0; k < kPixels; ++k)
        sum += w[c * kPixels + k] * image[r * kPixels + k];
      EXPECT_EQ(output[r * kClasses + c], sum);
    }
  // One SGD step from zero momentum: the buffer is the gradient.
  std::vector<float> grad = floatsOf(got->at("grad.fc.weight"));
  std::vector<float> updated = floatsOf(got->at("fc.weight"));
  EXPECT_EQ(floatsOf(got->at("fc.weight.momentum_buffer")), grad);
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_EQ(updated[i], w[i] - kLearningRate * grad[i]);
  EXPECT_GT(floatsOf(got->at("loss"))[0], 0.5f);

  // --poison overwrites the gradients after the update; the step still
  // reports them as computed (observe comes first), byte for byte.
  Result poisoned = run(spec, {"step", "--poison", "--load", file("init.safetensors"), "--batch",
                               file("batch.safetensors"), "--out", file("p.safetensors")});
  ASSERT_EQ(poisoned.code, 0) << poisoned.err;
  absl::StatusOr<TensorMap> again = loadSafetensors(file("p.safetensors"));
  ASSERT_TRUE(again.ok()) << again.status();
  for (const auto &[name, tensor] : *got)
    EXPECT_EQ(again->at(name).bytes, tensor.bytes) << name;
}

TEST_F(RunMain, PredictWritesTheForwardOutputOfEveryExample) {
  ASSERT_EQ(run(spec, {"init", "--seed", "3", "--save", file("w.safetensors")}).code, 0);
  absl::StatusOr<TensorMap> weights = loadSafetensors(file("w.safetensors"));
  ASSERT_TRUE(weights.ok()) << weights.status();
  // 13 examples: a whole batch of 10 and a partial one.
  constexpr int kExamples = 13;
  auto [pixels, labels] = examples(kExamples, 9);
  writeBytes(file("x.npy"), npyFile("|u1", {kExamples, 1, 4, 4}, pixels));
  Result predict = run(spec, {"predict", "--load", file("w.safetensors"), "--input",
                              file("x.npy"), "--out", file("y.npy")});
  ASSERT_EQ(predict.code, 0) << predict.err;
  EXPECT_NE(predict.out.find("wrote the outputs [13, 3] of 13 examples"), std::string::npos)
      << predict.out;
  absl::StatusOr<HostTensor> y = readNpy(file("y.npy"));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape, (std::vector<int64_t>{kExamples, kClasses}));
  std::vector<float> w = floatsOf(weights->at("fc.weight")), b = floatsOf(weights->at("fc.bias"));
  std::vector<float> out = floatsOf(*y);
  for (int64_t r = 0; r < kExamples; ++r)
    for (int64_t c = 0; c < kClasses; ++c) {
      float sum = b[c];
      for (int64_t k = 0; k < kPixels; ++k)
        sum += w[c * kPixels + k] *
               (static_cast<float>(static_cast<unsigned char>(pixels[r * kPixels + k])) / 255.0f);
      EXPECT_EQ(out[r * kClasses + c], sum) << "example " << r << " class " << c;
    }
  // The forward pass reads 'image' only; anything else is named.
  expectFailure({"predict", "--load", file("w.safetensors"), "--input",
                 "label=" + file("x.npy"), "--out", file("z.npy")},
                {"--input 'label=", "input of the forward pass (image)"});
  writeBytes(file("short.npy"), npyFile("|u1", {2, 5}, std::string(10, 0)));
  expectFailure({"predict", "--load", file("w.safetensors"), "--input", file("short.npy"),
                 "--out", file("z.npy")},
                {file("short.npy"), "(16 values per example)"});
  EXPECT_FALSE(std::ifstream(file("z.npy")).good());
}

TEST_F(RunMain, BadCheckpointsNameFileAndTensor) {
  ASSERT_EQ(run(spec, {"init", "--save", file("good.safetensors")}).code, 0);
  absl::StatusOr<TensorMap> good = loadSafetensors(file("good.safetensors"));
  ASSERT_TRUE(good.ok());
  std::vector<std::string> outputs = {"--save", file("s.safetensors"), "--metrics",
                                      file("m.json")};
  auto train = [&](const std::string &load) {
    std::vector<std::string> args = {"train", "--data", data.path, "--load", load};
    args.insert(args.end(), outputs.begin(), outputs.end());
    return args;
  };

  TensorMap missing = *good;
  missing.erase("fc.bias");
  ASSERT_TRUE(saveSafetensors(file("missing.safetensors"), missing).ok());
  expectFailure(train(file("missing.safetensors")),
                {file("missing.safetensors"), "'fc.bias' is missing"});

  TensorMap reshaped = *good;
  reshaped["fc.weight"].shape = {kPixels, kClasses};
  ASSERT_TRUE(saveSafetensors(file("reshaped.safetensors"), reshaped).ok());
  expectFailure(train(file("reshaped.safetensors")),
                {file("reshaped.safetensors"), "'fc.weight' has shape [16, 3]", "[3, 16]"});

  TensorMap retyped = *good;
  retyped["num_batches_tracked"].dtype = DType::F64;
  ASSERT_TRUE(saveSafetensors(file("retyped.safetensors"), retyped).ok());
  expectFailure(train(file("retyped.safetensors")),
                {file("retyped.safetensors"), "'num_batches_tracked' has dtype F64"});

  TensorMap extra = *good;
  extra["fc2.weight"] = good->at("fc.bias");
  ASSERT_TRUE(saveSafetensors(file("extra.safetensors"), extra).ok());
  expectFailure(train(file("extra.safetensors")),
                {file("extra.safetensors"), "'fc2.weight' is not a parameter"});

  // Cut inside the last tensor's data: the loader names that tensor.
  std::string bytes = readBytes(file("good.safetensors"));
  writeBytes(file("cut.safetensors"), bytes.substr(0, bytes.size() - 3));
  expectFailure(train(file("cut.safetensors")),
                {file("cut.safetensors"), "'num_batches_tracked'"});

  ASSERT_TRUE(saveSafetensors(file("steps.safetensors"), *good,
                              {{"cairn.optimizer_steps", "-3"}})
                  .ok());
  expectFailure(train(file("steps.safetensors")),
                {file("steps.safetensors"),
                 "metadata 'cairn.optimizer_steps' is '-3'",
                 "expected a count of steps"});

  expectFailure(train(file("absent.safetensors")), {file("absent.safetensors"), "cannot open"});
  expectFailure({"eval", "--data", data.path, "--load", file("missing.safetensors"),
                 "--metrics", file("m.json")},
                {file("missing.safetensors"), "'fc.bias' is missing"});
  expectFailure({"step", "--load", file("missing.safetensors"), "--batch", file("nope"),
                 "--out", file("o.safetensors")},
                {file("missing.safetensors"), "'fc.bias' is missing"});
}

TEST_F(RunMain, BadBatchFilesForStep) {
  ASSERT_EQ(run(spec, {"init", "--save", file("w.safetensors")}).code, 0);
  TensorMap batch;
  batch["image"] = HostTensor{DType::F32, {kBatch, 16}, std::vector<uint8_t>(kBatch * 64)};
  batch["label"] = HostTensor{DType::I64, {kBatch}, std::vector<uint8_t>(kBatch * 8)};
  ASSERT_TRUE(saveSafetensors(file("flat.safetensors"), batch).ok());
  std::vector<std::string> step = {"step", "--load", file("w.safetensors"), "--batch",
                                   file("flat.safetensors"), "--out", file("o.safetensors")};
  expectFailure(step, {file("flat.safetensors"), "'image' has shape [10, 16]"});

  batch["image"].shape = {kBatch, 1, 4, 4};
  batch["label"].bytes[8 * 4] = 7;
  ASSERT_TRUE(saveSafetensors(file("flat.safetensors"), batch).ok());
  expectFailure(step, {file("flat.safetensors"), "'label' at index 4 is 7"});

  batch["label"].bytes[8 * 4] = 0;
  batch["labels"] = batch["label"];
  ASSERT_TRUE(saveSafetensors(file("flat.safetensors"), batch).ok());
  expectFailure(step, {file("flat.safetensors"), "'labels' is not an input"});
}

TEST_F(RunMain, KernelErrorsEndTheRunCleanly) {
  spec.trainStep = [](unsigned char *, const StepContext &ctx) {
    if (ctx.step == 2)
      throw cairn::kernels::KernelError("embedding: index 99 is past the table");
  };
  expectFailure({"train", "--data", data.path, "--save", file("s.safetensors"), "--metrics",
                 file("m.json")},
                {"error: training step 3 (epoch 1): embedding: index 99 is past the table"});
  spec.forward = [](unsigned char *, const StepContext &) {
    throw cairn::kernels::KernelError("conv: bad input");
  };
  ASSERT_EQ(run(makeSpec(), {"init", "--save", file("w.safetensors")}).code, 0);
  expectFailure({"eval", "--data", data.path, "--load", file("w.safetensors"), "--metrics",
                 file("m.json")},
                {"error: evaluation of test examples 0 to 9: conv: bad input"});
}

TEST_F(RunMain, DataErrors) {
  TempDir other;
  writeBytes(other.file("train_images.npy"), npyFile("|u1", {20, 5, 5}, std::string(500, 0)));
  writeBytes(other.file("train_labels.npy"), npyFile("|u1", {20}, std::string(20, 0)));
  expectFailure({"train", "--data", other.path, "--save", file("s.safetensors")},
                {other.file("train_images.npy"), "[20, 5, 5]", "'image' F32 [10, 1, 4, 4]"});
  writeBytes(other.file("train_images.npy"), npyFile("|u1", {5, 4, 4}, std::string(80, 0)));
  writeBytes(other.file("train_labels.npy"), npyFile("|u1", {5}, std::string(5, 0)));
  expectFailure({"train", "--data", other.path},
                {other.path, "5 training examples are fewer than one batch of 10"});
  expectFailure({"eval", "--data", other.path, "--load", file("w")},
                {other.path, "no test data"});
  expectFailure({"train", "--data", other.path + "/none"}, {"data directory not found"});
  expectFailure({"train", "--data", data.path, "--save", out.path + "/no/s.safetensors"},
                {"no/s.safetensors", "not writable"});
}

TEST_F(RunMain, UsageErrorsHelpAndVersion) {
  expectFailure({"train", "--bogus"}, {"unknown flag '--bogus'", "softmax --help"});
  expectFailure({"train", "--epochs", "2", "--steps", "3"}, {"exclude each other"});
  expectFailure({}, {"no command"});
  Result help = run(spec, {"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--normalize MEAN,STD"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("SoftmaxRegression"), std::string::npos) << help.out;
  Result version = run(spec, {"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("Cairn"), std::string::npos) << version.out;
}

} // namespace
