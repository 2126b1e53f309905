//===- WorkspaceRuleTest.cpp - The compiler's scratch rules ---------------===//
//
// The compiler sizes a convolution's workspace by the target's rule
// (passes/LoweringTargets.cpp); the CPU kernels walk the scratch by their
// own (runtime/kernels/Conv.h), and a half GEMM's likewise (HalfGemm.h).
// The two must agree on every shape, or the kernel writes past the bytes the
// plan gave it.
//
//===----------------------------------------------------------------------===//

#include "passes/Lowering.h"

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/HalfConv.h"
#include "runtime/kernels/HalfGemm.h"

#include <tuple>

#include <gtest/gtest.h>

using namespace cairn;

TEST(WorkspaceRuleTest, TheCpuConvolutionRuleIsTheKernelsOwn) {
  LoweringTarget cpu = getCpuTarget(), cuda = getCudaTarget();
  ASSERT_TRUE(cpu.convWorkspaceElements);
  ASSERT_TRUE(cuda.convWorkspaceElements);
  int shapes = 0;
  for (int64_t n : {1, 8})
    for (int64_t groups : {1, 2, 4})
      for (int64_t c : {4, 8, 12})
        for (int64_t k : {1, 3, 5})
          for (int64_t stride : {1, 2})
            for (int64_t pad : {0, 1, 2})
              for (int64_t dilation : {1, 2})
                for (int64_t h : {7, 16}) {
                  if (c % groups)
                    continue;
                  int64_t span = dilation * (k - 1) + 1;
                  if (h + 2 * pad < span)
                    continue;
                  int64_t ho = (h + 2 * pad - span) / stride + 1;
                  int64_t wo = (h + 1 + 2 * pad - span) / stride + 1;
                  kernels::Conv2dShape s{n,   c,      h,    h + 1, 2 * groups,
                                         k,   k,      stride, stride, pad,
                                         pad, dilation, dilation, groups,
                                         ho,  wo};
                  std::vector<int64_t> attr = {
                      s.n,  s.c,  s.h,  s.w,  s.o,  s.kh, s.kw, s.sh,
                      s.sw, s.ph, s.pw, s.dh, s.dw, s.groups, s.ho, s.wo};
                  for (kernels::ConvPass pass :
                       {kernels::ConvPass::Forward,
                        kernels::ConvPass::BackwardInput,
                        kernels::ConvPass::BackwardWeight}) {
                    int64_t kernel = kernels::conv2dWorkspaceElements(s, pass);
                    EXPECT_EQ(
                        cpu.convWorkspaceElements(attr, pass, false, false),
                        kernel);
                    // cuDNN's budget is the same size, so the arenas agree.
                    EXPECT_EQ(
                        cuda.convWorkspaceElements(attr, pass, false, false),
                        kernel);
                    EXPECT_EQ(
                        cuda.convWorkspaceElements(attr, pass, true, false),
                        kernel);
                    // A half one on the CPU: HalfConv.h's floats, as half
                    // elements; a weight gradient written in float32 sums
                    // in its result, without the weights' scratch.
                    for (bool float32Result : {false, true}) {
                      int64_t half = kernels::halfConv2dWorkspaceElements(
                          s, pass, float32Result);
                      EXPECT_EQ(cpu.convWorkspaceElements(attr, pass, true,
                                                          float32Result),
                                2 * half);
                      if (!float32Result)
                        continue;
                      // Without the weights for the weight gradient only.
                      int64_t weights =
                          pass == kernels::ConvPass::BackwardWeight
                              ? s.o * (s.c / s.groups) * s.kh * s.kw
                              : 0;
                      EXPECT_EQ(half + weights,
                                kernels::halfConv2dWorkspaceElements(s, pass));
                    }
                  }
                  ++shapes;
                }
  EXPECT_GT(shapes, 500);
}

TEST(WorkspaceRuleTest, CudaGemmsWithALongReductionGetScratch) {
  auto rule = getCudaTarget().gemmWorkspaceBytes;
  ASSERT_TRUE(rule);
  for (bool half : {false, true}) {
    // K no longer than an output side: no split-K, no bytes.
    EXPECT_EQ(rule(1, 64, 256, 256, 64 * 256 * 4, half), 0);
    EXPECT_EQ(rule(1, 256, 784, 64, 256 * 784 * 4, half), 0);
    // A long reduction: the output's bytes, rounded up to 256.
    EXPECT_EQ(rule(1, 10, 10, 4096, 400, half), 512);
    EXPECT_EQ(rule(1, 1, 1, 100, 4, half), 256);
    // At most kCudaGemmWorkspaceBytes.
    EXPECT_EQ(rule(1, 2048, 2048, 65536, int64_t(2048) * 2048 * 4, half),
              kCudaGemmWorkspaceBytes);
  }
}

TEST(WorkspaceRuleTest, CpuHalfGemmsGetTheKernelsPanels) {
  auto rule = getCpuTarget().gemmWorkspaceBytes;
  ASSERT_TRUE(rule);
  // Float GEMMs go to the BLAS as they are.
  EXPECT_EQ(rule(1, 64, 256, 784, 64 * 256 * 4, false), 0);
  EXPECT_EQ(rule(1, 8192, 2048, 512, int64_t(8192) * 2048 * 4, false), 0);
  // Half ones get halfGemm's float32 panels and tile, the kernel's own rule.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{64, 256, 784},
                         {256, 784, 64},
                         {8192, 2048, 512},
                         {10, 10, 0}}) {
    int64_t bytes = rule(1, m, n, k, m * n * 4, true);
    EXPECT_EQ(bytes, kernels::halfGemmWorkspaceElements(m, n, k) * 4);
    EXPECT_EQ(bytes % 2, 0) << "not whole half elements";
  }
  // A batched matmul's: a slot of one product's tiles a thread, 2 to 8.
  EXPECT_EQ(
      rule(256, 28, 28, 16, 256 * 28 * 28 * 4, true),
      2 * kernels::halfGemmSlotElements(kernels::halfGemmTiles(28, 28, 16)) *
          4);
  EXPECT_EQ(
      rule(4096, 64, 64, 64, int64_t(4096) * 64 * 64 * 4, true),
      8 * kernels::halfGemmSlotElements(kernels::halfGemmTiles(64, 64, 64)) *
          4);
  EXPECT_EQ(rule(3, 8, 8, 8, 3 * 8 * 8 * 4, true),
            2 * kernels::halfGemmSlotElements(kernels::halfGemmTiles(8, 8, 8)) *
                4);
}
