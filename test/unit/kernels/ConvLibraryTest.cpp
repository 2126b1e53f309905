//===- ConvLibraryTest.cpp - oneDNN's convolutions inside the plan --------===//
//
// The generated code's convolution calls (ConvLibrary.h) against the
// im2col kernels in double (checked against a direct loop and finite
// differences in ConvTest.cpp): with exactly the planned workspace and a
// guard band after it, every pass, batches that split into chunks with a
// shorter last one, and the shapes of the examples, which must run on
// oneDNN and not fall back.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/ConvLibrary.h"

#include "runtime/kernels/KernelError.h"

#include "ConvShapes.h"
#include "GradCheck.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

constexpr int64_t kGuard = 64;

/// A square input and kernel, the same stride, padding and dilation on
/// both axes.
Conv2dShape square(int64_t n, int64_t c, int64_t h, int64_t o, int64_t k,
                   int64_t stride = 1, int64_t pad = 0, int64_t dilation = 1) {
  return shape(n, c, h, h, o, k, k, stride, stride, pad, pad, dilation,
               dilation);
}

/// The planned workspace of a pass and a guard band that must stay intact.
struct Workspace {
  std::vector<float> data;
  int64_t size;
  Workspace(const Conv2dShape &s, ConvPass pass)
      : size(conv2dWorkspaceElements(s, pass)) {
    data.assign(size + kGuard, 12345.0f);
  }
  float *get() { return data.data(); }
  size_t bytes() const { return size * sizeof(float); }
  bool guardIntact() const {
    return std::all_of(data.begin() + size, data.end(),
                       [](float v) { return v == 12345.0f; });
  }
};

/// The three passes' float outputs: y, dx, dw, dbias.
using Outputs = std::vector<std::vector<float>>;

struct Case {
  Conv2dShape s;
  std::vector<double> x, w, bias, dy;
  explicit Case(const Conv2dShape &s)
      : s(s), x(randomVector(xSize(s), 71)), w(randomVector(wSize(s), 72)),
        bias(randomVector(s.o, 73)), dy(randomVector(ySize(s), 74)) {}

  /// The im2col kernels in double.
  std::vector<std::vector<double>> reference() const {
    std::vector<std::vector<double>> out = {
        std::vector<double>(ySize(s)), std::vector<double>(xSize(s)),
        std::vector<double>(wSize(s)), std::vector<double>(s.o)};
    std::vector<double> ws(
        std::max({conv2dWorkspaceElements(s, ConvPass::Forward),
                  conv2dWorkspaceElements(s, ConvPass::BackwardInput),
                  conv2dWorkspaceElements(s, ConvPass::BackwardWeight)}));
    conv2dForward<double>(s, x.data(), w.data(), bias.data(), out[0].data(),
                          ws.data());
    conv2dBackwardInput<double>(s, dy.data(), w.data(), out[1].data(),
                                ws.data());
    conv2dBackwardWeight<double>(s, dy.data(), x.data(), out[2].data(),
                                 out[3].data(), ws.data());
    return out;
  }

  /// The generated code's calls, sites 0 to 2 of `library`; outputs start
  /// as NaN to show they are overwritten.
  Outputs run(ConvLibrary &library) const {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Outputs out = {
        std::vector<float>(ySize(s), nan), std::vector<float>(xSize(s), nan),
        std::vector<float>(wSize(s), nan), std::vector<float>(s.o, nan)};
    std::vector<float> fx(x.begin(), x.end()), fw(w.begin(), w.end()),
        fb(bias.begin(), bias.end()), fdy(dy.begin(), dy.end());
    Workspace forward(s, ConvPass::Forward), input(s, ConvPass::BackwardInput),
        weight(s, ConvPass::BackwardWeight);
    conv2dForward<float>(library, 0, s, fx.data(), fw.data(), fb.data(),
                         out[0].data(), forward.get(), forward.bytes());
    conv2dBackwardInput<float>(library, 1, s, fdy.data(), fw.data(), nullptr,
                               out[1].data(), input.get(), input.bytes());
    conv2dBackwardWeight<float>(library, 2, s, fdy.data(), fx.data(),
                                out[2].data(), out[3].data(), weight.get(),
                                weight.bytes());
    EXPECT_TRUE(forward.guardIntact()) << describe(s);
    EXPECT_TRUE(input.guardIntact()) << describe(s);
    EXPECT_TRUE(weight.guardIntact()) << describe(s);
    return out;
  }
};

void expectNear(const Outputs &got,
                const std::vector<std::vector<double>> &want,
                const std::string &what) {
  const char *names[] = {"y", "dx", "dw", "dbias"};
  for (size_t t = 0; t < want.size(); ++t) {
    double scale = 1;
    for (double v : want[t])
      scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < want[t].size(); ++i)
      ASSERT_NEAR(double(got[t][i]), want[t][i], 2e-5 * scale)
          << what << " " << names[t] << " element " << i;
  }
}

bool onOneDnn(const ConvLibrary &library, int site) {
  return library.describe(site).rfind("oneDNN ", 0) == 0;
}

/// How many images a site's oneDNN calls take ("..., 4 images a call").
int64_t imagesPerCall(const ConvLibrary &library, int site) {
  const std::string text = library.describe(site);
  const size_t comma = text.rfind(", ");
  return comma == std::string::npos ? 0 : std::stoll(text.substr(comma + 2));
}

TEST(ConvLibrary, ExampleShapesRunOnOneDnnWithinThePlannedWorkspace) {
  // cnn's two convolutions, the first of resnet18's stages, strided and
  // dilated ones; 65 images split into chunks with a shorter last one. Which
  // passes fit: cnn's first convolution (one input channel) has a column
  // matrix of 9 x 784 floats, too small for the blocked copy of one image's
  // 16 output planes, and runs im2col; the strided ones' weight gradients
  // need a little more than their column matrix.
  struct Expected {
    Conv2dShape s;
    bool onOneDnn[3]; // forward, input gradient, weight gradient
  };
  const std::vector<Expected> cases = {
      {square(64, 1, 28, 32, 3, 1, 1), {false, false, false}},
      {square(64, 32, 14, 64, 3, 1, 1), {true, true, true}},
      {square(65, 32, 14, 64, 3, 1, 1), {true, true, true}},
      {square(8, 64, 32, 64, 3, 1, 1), {true, true, true}},
      {square(9, 16, 15, 32, 3, 2, 1), {true, true, false}},
      {square(6, 16, 12, 16, 3, 1, 2, 2), {true, true, true}},
      // The window leaves the input's last row and column out: oneDNN's
      // right padding is -1.
      {square(4, 16, 16, 32, 3, 2, 0), {true, true, false}},
  };
  for (const Expected &e : cases) {
    SCOPED_TRACE(describe(e.s));
    const Case c(e.s);
    ConvLibrary library;
    const Outputs got = c.run(library);
    for (int site = 0; site < 3; ++site)
      EXPECT_EQ(onOneDnn(library, site), e.onOneDnn[site])
          << "site " << site << ": " << library.describe(site);
    expectNear(got, c.reference(), "oneDNN");
    // The same bits on every call.
    EXPECT_EQ(c.run(library), got);
  }
}

/// How many slices a site's calls take its channels in ("... in 8 slices of
/// 64 output channels"; 1 without).
int64_t slicesOf(const ConvLibrary &library, int site) {
  const std::string text = library.describe(site);
  const size_t in = text.rfind(" in ");
  return !onOneDnn(library, site) || in == std::string::npos
             ? 1
             : std::stoll(text.substr(in + 4));
}

TEST(ConvLibrary, WideWeightsRunInSlicesOfTheirChannels) {
  // ResNet-18's last two stages: the blocked copy of their weights (up to
  // 9 MiB) outgrows im2col's bytes (2.5 MiB at most), so the forward takes
  // its output channels a slice at a time, the input gradient its input
  // channels, each slice's part of the weights and of the output strided in
  // the NCHW tensors; they agree with the double im2col kernels. The weight
  // gradients, which do not slice, run im2col.
  const std::vector<Conv2dShape> shapes = {square(5, 512, 4, 512, 3, 1, 1),
                                           square(5, 256, 8, 512, 3, 2, 1),
                                           square(5, 256, 8, 256, 3, 1, 1)};
  for (const Conv2dShape &s : shapes) {
    SCOPED_TRACE(describe(s));
    const Case c(s);
    ConvLibrary library;
    const Outputs got = c.run(library);
    for (int site = 0; site < 2; ++site) {
      EXPECT_TRUE(onOneDnn(library, site)) << library.describe(site);
      EXPECT_GT(slicesOf(library, site), 1) << library.describe(site);
    }
    EXPECT_NE(library.describe(0).find(" output channels"), std::string::npos)
        << library.describe(0);
    EXPECT_NE(library.describe(1).find(" input channels"), std::string::npos)
        << library.describe(1);
    EXPECT_FALSE(onOneDnn(library, 2)) << library.describe(2);
    expectNear(got, c.reference(), "sliced");
    EXPECT_EQ(c.run(library), got);
  }
}

TEST(ConvLibrary, ChunksAreAsLargeAsTheWorkspaceAllows) {
  // cnn's second convolution: the planned workspace (one image's column
  // matrix, 288 x 196 floats) holds the blocked copies of a few images at
  // a time, not the batch; 65 images leave a shorter last chunk.
  const Conv2dShape s = square(65, 32, 14, 64, 3, 1, 1);
  const Case c(s);
  ConvLibrary library;
  const Outputs got = c.run(library);
  for (int site = 0; site < 3; ++site) {
    const int64_t images = imagesPerCall(library, site);
    EXPECT_GE(images, 1) << library.describe(site);
    EXPECT_LT(images, s.n) << library.describe(site);
    EXPECT_NE(s.n % images, 0) << library.describe(site);
  }
  expectNear(got, c.reference(), "chunked");
}

/// Runs the three passes, sites 0 to 2, each with `bytes(pass)` of
/// workspace.
template <typename Bytes>
Outputs runWith(ConvLibrary &library, const Case &c, Bytes bytes) {
  const Conv2dShape &s = c.s;
  std::vector<float> fx(c.x.begin(), c.x.end()), fw(c.w.begin(), c.w.end()),
      fb(c.bias.begin(), c.bias.end()), fdy(c.dy.begin(), c.dy.end());
  Outputs out = {std::vector<float>(ySize(s)), std::vector<float>(xSize(s)),
                 std::vector<float>(wSize(s)), std::vector<float>(s.o)};
  const ConvPass passes[3] = {ConvPass::Forward, ConvPass::BackwardInput,
                              ConvPass::BackwardWeight};
  std::vector<std::vector<float>> ws;
  for (ConvPass pass : passes)
    ws.emplace_back(bytes(pass) / sizeof(float));
  conv2dForward<float>(library, 0, s, fx.data(), fw.data(), fb.data(),
                       out[0].data(), ws[0].data(),
                       ws[0].size() * sizeof(float));
  conv2dBackwardInput<float>(library, 1, s, fdy.data(), fw.data(), nullptr,
                             out[1].data(), ws[1].data(),
                             ws[1].size() * sizeof(float));
  conv2dBackwardWeight<float>(library, 2, s, fdy.data(), fx.data(),
                              out[2].data(), out[3].data(), ws[2].data(),
                              ws[2].size() * sizeof(float));
  return out;
}

TEST(ConvLibrary, SpareBytesChangeTheChunksButNoBits) {
  // With the bound cairn-grow-workspaces asks for, the forward and the
  // input gradient take the whole batch in one call, the weight gradient
  // keeps the chunk of im2col's bytes; every result has the bits of the
  // planned workspace alone. (oneDNN computes each output element of the
  // forward and input gradient whole, whatever images share the call; a
  // weight gradient sums over the images, chunk by chunk.)
  const std::vector<Conv2dShape> shapes = {
      square(64, 32, 14, 64, 3, 1, 1), square(13, 64, 32, 64, 3, 1, 1),
      square(9, 16, 15, 32, 3, 2, 1), square(6, 16, 12, 16, 3, 1, 2, 2),
      // In slices: the same slices with more bytes, and whole-batch chunks.
      square(6, 512, 4, 512, 3, 1, 1), square(7, 256, 8, 256, 3, 1, 1)};
  for (const Conv2dShape &s : shapes) {
    SCOPED_TRACE(describe(s));
    const Case c(s);
    auto planned = [&](ConvPass pass) {
      return conv2dWorkspaceElements(s, pass) * sizeof(float);
    };
    ConvLibrary tight, roomy;
    const Outputs want = runWith(tight, c, planned);
    const Outputs got = runWith(roomy, c, [&](ConvPass pass) {
      return std::max<size_t>(planned(pass),
                              conv2dLibraryWorkspaceBytes(s, pass));
    });
    EXPECT_EQ(imagesPerCall(roomy, 0), s.n) << roomy.describe(0);
    EXPECT_EQ(imagesPerCall(roomy, 1), s.n) << roomy.describe(1);
    EXPECT_EQ(roomy.describe(2), tight.describe(2));
    EXPECT_EQ(slicesOf(roomy, 0), slicesOf(tight, 0)) << roomy.describe(0);
    EXPECT_EQ(slicesOf(roomy, 1), slicesOf(tight, 1)) << roomy.describe(1);
    EXPECT_EQ(conv2dLibraryWorkspaceBytes(s, ConvPass::BackwardWeight), 0);
    for (size_t t = 0; t < want.size(); ++t)
      EXPECT_EQ(got[t], want[t]) << "output " << t;
  }
}

TEST(ConvLibrary, SpareBytesDoNotBringASiteOntoOneDnn) {
  // cnn's first convolution: one image's blocked output, even in a slice of
  // 16 channels, outgrows im2col's bytes (a 9 x 784 column matrix). With
  // far more, it still runs im2col, as it must in every plan, and writes
  // nothing from the library.
  const Conv2dShape s = square(4, 1, 28, 32, 3, 1, 1);
  ConvLibrary library;
  std::vector<float> x(xSize(s), 1), w(wSize(s), 1), y(ySize(s), -7);
  std::vector<float> workspace(1 << 24, -7);
  EXPECT_FALSE(library.forward(0, s, x.data(), w.data(), nullptr, y.data(),
                               workspace.data(),
                               workspace.size() * sizeof(float)));
  EXPECT_EQ(library.describe(0).rfind("im2col (oneDNN ", 0), 0)
      << library.describe(0);
  EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return v == -7; }));
  EXPECT_TRUE(std::all_of(workspace.begin(), workspace.end(),
                          [](float v) { return v == -7; }));
}

TEST(ConvLibrary, RefusesAWorkspaceSmallerThanIm2cols) {
  const Conv2dShape s = square(2, 4, 6, 4, 3, 1, 1);
  ConvLibrary library;
  std::vector<float> x(xSize(s), 1), w(wSize(s), 1), y(ySize(s));
  Workspace ws(s, ConvPass::Forward);
  EXPECT_THROW(conv2dForward<float>(library, 0, s, x.data(), w.data(), nullptr,
                                    y.data(), ws.get(), ws.bytes() - 4),
               KernelError);
  EXPECT_THROW(library.forward(1, s, x.data(), w.data(), nullptr, y.data(),
                               ws.get(), 16),
               KernelError);
}

TEST(ConvLibrary, DisabledRunsTheIm2colKernelsBitForBit) {
  const Conv2dShape s = square(8, 32, 14, 64, 3, 1, 1);
  const Case c(s);
  ConvLibrary disabled(false);
  const Outputs got = c.run(disabled);
  EXPECT_EQ(disabled.describe(0),
            "im2col (oneDNN disabled by CAIRN_CPU_CONV=im2col)");
  std::vector<float> fx(c.x.begin(), c.x.end()), fw(c.w.begin(), c.w.end()),
      fb(c.bias.begin(), c.bias.end()), y(ySize(s));
  Workspace ws(s, ConvPass::Forward);
  conv2dForward<float>(s, fx.data(), fw.data(), fb.data(), y.data(), ws.get());
  EXPECT_EQ(got[0], y);
}

TEST(ConvLibrary, ForwardAndInputGradientHaveTheSameBitsOnAnyThreads) {
  const Conv2dShape s = square(9, 32, 14, 64, 3, 1, 1);
  const Case c(s);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  ConvLibrary one;
  const Outputs single = c.run(one);
  omp_set_num_threads(std::max(threads, 3));
  ConvLibrary many;
  const Outputs multi = c.run(many);
  omp_set_num_threads(threads);
  EXPECT_EQ(single[0], multi[0]);
  EXPECT_EQ(single[1], multi[1]);
}

TEST(ConvLibrary, ASiteKeepsItsShape) {
  ConvLibrary library;
  const Conv2dShape s = square(2, 4, 6, 4, 3, 1, 1);
  std::vector<float> x(xSize(s), 1), w(wSize(s), 1), y(ySize(s));
  Workspace ws(s, ConvPass::Forward);
  conv2dForward<float>(library, 0, s, x.data(), w.data(), nullptr, y.data(),
                       ws.get(), ws.bytes());
  const Conv2dShape other = square(3, 4, 6, 4, 3, 1, 1);
  std::vector<float> x3(xSize(other), 1), y3(ySize(other));
  Workspace ws3(other, ConvPass::Forward);
  EXPECT_THROW(conv2dForward<float>(library, 0, other, x3.data(), w.data(),
                                    nullptr, y3.data(), ws3.get(), ws3.bytes()),
               KernelError);
}

} // namespace
