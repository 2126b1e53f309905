//===- ParallelTest.cpp - Threaded kernels give the same bits -------------===//
//
// Parallel.h promises that a kernel's result does not depend on the number
// of threads (for the GEMMs, where the BLAS core allows: blasTolerance). Each kernel split across threads runs here on inputs large
// enough to be split, with one thread and with three (more than the chunks
// of two, so uneven edges are crossed), and the outputs must match bit for
// bit. A kernel that summed per thread, or that wrote across a chunk edge,
// would fail.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Dropout.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Gemm.h"
#include "runtime/kernels/Movement.h"
#include "runtime/kernels/Normalization.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/Softmax.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

using namespace cairn::kernels;

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Runs `kernel` (which writes the vectors in `outs`) with one thread and
/// with three, and expects the outputs equal bit for bit, or, with
/// `relative` > 0, within that relative error of the largest magnitude.
void expectSameBits(const std::vector<std::vector<float> *> &outs,
                    const std::function<void()> &kernel,
                    double relative = 0) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  kernel();
  std::vector<std::vector<float>> serial;
  for (auto *out : outs)
    serial.push_back(*out);
  for (auto *out : outs)
    std::fill(out->begin(), out->end(), -7.0f);
  omp_set_num_threads(3);
  kernel();
  omp_set_num_threads(saved);
  for (size_t k = 0; k < outs.size(); ++k) {
    ASSERT_EQ(serial[k].size(), outs[k]->size());
    if (relative == 0) {
      EXPECT_EQ(0, std::memcmp(serial[k].data(), outs[k]->data(),
                               serial[k].size() * sizeof(float)))
          << "output " << k << " differs between 1 and 3 threads";
      continue;
    }
    double scale = 0;
    for (float v : serial[k])
      scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < serial[k].size(); ++i)
      ASSERT_NEAR((*outs[k])[i], serial[k][i], relative * scale)
          << "output " << k << " element " << i;
  }
}

/// The BLAS's products: on the cores Cairn's executables select on AVX-512
/// CPUs (BlasSetup.h) a row of C is the same dot product whichever rows a
/// call covers, so splits give the same bits; other cores (Haswell's, which
/// a test environment may force through OPENBLAS_CORETYPE) round by the
/// block a row falls in, so the products only agree to rounding there.
double blasTolerance() {
  for (const char *exact : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (std::strcmp(blasCoreName(), exact) == 0)
      return 0;
  return 1e-5;
}

TEST(Parallel, ActivationsAndBinaryOps) {
  const int64_t n = 300001; // not a multiple of a vector or a chunk
  auto x = randomFloats(n, 1), dy = randomFloats(n, 2), b = randomFloats(977, 3);
  std::vector<float> y(n), dx(n), sum(n);
  for (Activation kind : {Activation::Relu, Activation::Sigmoid,
                          Activation::Tanh, Activation::GeluExact,
                          Activation::GeluTanh})
    expectSameBits({&y, &dx}, [&] {
      activationForward<float>(kind, n, x.data(), y.data());
      activationBackward<float>(kind, n, dy.data(), x.data(), dx.data());
    });
  // [307, 977] + [977]: a broadcast split by rows.
  const int64_t shape[] = {307, 977}, as[] = {977, 1}, bs[] = {0, 1};
  std::vector<float> out(307 * 977);
  expectSameBits({&out}, [&] {
    binaryBroadcast<float>(BinaryOp::Add, 2, shape, x.data(), as, b.data(), bs,
                           out.data());
  });
}

TEST(Parallel, Dropout) {
  const int64_t n = 200003;
  auto x = randomFloats(n, 4);
  std::vector<float> y(n);
  expectSameBits({&y},
                 [&] { dropout<float>(n, 0.3, 11, 5, 2, x.data(), y.data()); });
}

TEST(Parallel, Softmax) {
  // Rows (inner 1) and column blocks (inner 100, a partial block of 64).
  for (int64_t inner : {int64_t(1), int64_t(100)}) {
    const int64_t outer = 301, dim = 57, n = outer * dim * inner;
    auto x = randomFloats(n, 5), dy = randomFloats(n, 6);
    std::vector<float> y(n), dx(n), ly(n), ldx(n);
    expectSameBits({&y, &dx, &ly, &ldx}, [&] {
      softmaxForward(false, outer, dim, inner, x.data(), y.data());
      softmaxBackward(false, outer, dim, inner, dy.data(), y.data(),
                      dx.data());
      softmaxForward(true, outer, dim, inner, x.data(), ly.data());
      softmaxBackward(true, outer, dim, inner, dy.data(), ly.data(),
                      ldx.data());
    });
  }
}

TEST(Parallel, Normalization) {
  const int64_t n = 16, c = 37, spatial = 301;
  auto x = randomFloats(n * c * spatial, 7), dy = randomFloats(n * c * spatial, 8);
  auto gamma = randomFloats(c, 9), beta = randomFloats(c, 10);
  std::vector<float> y(x.size()), dx(x.size()), dgamma(c), dbeta(c),
      mean(c, 0.0f), var(c, 1.0f);
  int64_t tracked = 0;
  expectSameBits({&y, &dx, &dgamma, &dbeta, &mean, &var}, [&] {
    std::fill(mean.begin(), mean.end(), 0.0f);
    std::fill(var.begin(), var.end(), 1.0f);
    batchNormTrainingForward<float>(n, c, spatial, x.data(), gamma.data(),
                                    beta.data(), 1e-5, y.data());
    batchNormBackward<float>(n, c, spatial, dy.data(), x.data(), gamma.data(),
                             1e-5, dx.data(), dgamma.data(), dbeta.data());
    batchNormUpdateRunningStats<float>(n, c, spatial, x.data(), 0.1,
                                       mean.data(), var.data(), &tracked);
  });
  // LayerNorm: rows split for y and dx, columns for dgamma and dbeta.
  const int64_t rows = 1201, cols = 67;
  auto lx = randomFloats(rows * cols, 11), ldy = randomFloats(rows * cols, 12);
  auto lg = randomFloats(cols, 13), lb = randomFloats(cols, 14);
  std::vector<float> ly(lx.size()), ldx(lx.size()), ldg(cols), ldb(cols);
  expectSameBits({&ly, &ldx, &ldg, &ldb}, [&] {
    layerNormForward(rows, cols, lx.data(), lg.data(), lb.data(), 1e-5,
                     ly.data());
    layerNormBackward(rows, cols, ldy.data(), lx.data(), lg.data(), 1e-5,
                      ldx.data(), ldg.data(), ldb.data());
  });
}

TEST(Parallel, Pooling) {
  // 2x2 stride 2 (the plain path) and 3x3 stride 2 padded (overlapping).
  for (int64_t k : {int64_t(2), int64_t(3)}) {
    Pool2dShape s{};
    s.n = 8, s.c = 19, s.h = 32, s.w = 32, s.kh = s.kw = k, s.sh = s.sw = 2;
    s.ph = s.pw = k == 3 ? 1 : 0, s.dh = s.dw = 1;
    s.ho = (s.h + 2 * s.ph - k) / 2 + 1, s.wo = (s.w + 2 * s.pw - k) / 2 + 1;
    auto x = randomFloats(s.n * s.c * s.h * s.w, 15);
    auto dy = randomFloats(s.n * s.c * s.ho * s.wo, 16);
    std::vector<float> y(dy.size()), dx(x.size()), ay(dy.size()),
        adx(x.size());
    expectSameBits({&y, &dx, &ay, &adx}, [&] {
      maxPool2dForward<float>(s, x.data(), y.data());
      maxPool2dBackward<float>(s, dy.data(), x.data(), dx.data());
      avgPool2dForward(s, false, x.data(), ay.data());
      avgPool2dBackward(s, false, dy.data(), adx.data());
    });
  }
}

TEST(Parallel, Permute) {
  // Attention's head split (rows copied) and a transpose of the two inner
  // dimensions (the tiled path), split by rows across threads.
  const int64_t shape[] = {64, 28, 4, 16};
  auto x = randomFloats(64 * 28 * 4 * 16, 21);
  std::vector<float> y(x.size()), t(x.size());
  const int64_t heads[] = {0, 2, 1, 3}, inner[] = {0, 1, 3, 2};
  expectSameBits({&y, &t}, [&] {
    permute(4, shape, heads, sizeof(float), x.data(), y.data());
    permute(4, shape, inner, sizeof(float), x.data(), t.data());
  });
}

TEST(Parallel, Conv) {
  // 3x3 padded and strided, with bias: im2col and col2im split by channel,
  // each product by rows.
  Conv2dShape s{};
  s.n = 2, s.c = 64, s.h = 33, s.w = 35, s.o = 40, s.kh = s.kw = 3;
  s.sh = s.sw = 2, s.ph = s.pw = 1, s.dh = s.dw = 1, s.groups = 1;
  s.ho = (s.h + 2 - 3) / 2 + 1, s.wo = (s.w + 2 - 3) / 2 + 1;
  auto x = randomFloats(s.n * s.c * s.h * s.w, 22);
  auto w = randomFloats(s.o * s.c * 9, 23), bias = randomFloats(s.o, 24);
  auto dy = randomFloats(s.n * s.o * s.ho * s.wo, 25);
  std::vector<float> y(dy.size()), dx(x.size()), dw(w.size()), db(s.o),
      work(s.c * 9 * s.ho * s.wo);
  expectSameBits({&y, &dx, &dw, &db}, [&] {
    conv2dForward(s, x.data(), w.data(), bias.data(), y.data(), work.data());
    conv2dBackwardInput(s, dy.data(), w.data(), dx.data(), work.data());
    conv2dBackwardWeight(s, dy.data(), x.data(), dw.data(), db.data(),
                         work.data());
  }, blasTolerance());
}

TEST(Parallel, Gemm) {
  // Many small products, split by matrix (each on one thread), and one
  // large product, which OpenBLAS threads itself: either way each element
  // is one dot product in the same order.
  const int64_t batch = 96, m = 28, n = 28, k = 16;
  auto a = randomFloats(batch * m * k, 17), b = randomFloats(batch * k * n, 18);
  std::vector<float> c(batch * m * n);
  expectSameBits({&c}, [&] {
    batchedGemm(batch, false, true, m, n, k, 1.0f, a.data(), k, m * k,
                b.data(), k, n * k, 0.0f, c.data(), n, m * n);
  }, blasTolerance());
  const int64_t big = 384;
  auto x = randomFloats(big * big, 19), w = randomFloats(big * big, 20);
  std::vector<float> y(big * big);
  expectSameBits({&y}, [&] {
    gemm(false, false, big, big, big, 1.0f, x.data(), big, w.data(), big,
         0.0f, y.data(), big);
  }, blasTolerance());
}

} // namespace
