// Times Cairn's CPU convolution kernels (runtime/kernels/Conv.h) on the
// shapes of ResNet-18 (3x32x32 images) and the cnn example, with 1, 2, 4, ...
// images per GEMM: what conv2dImagesPerGemm's threshold is chosen from.
// Prints one Markdown table row per shape and images-per-GEMM: the best of 7
// runs of each kernel in ms and GFLOP/s. Built and run by run.sh.
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Gemm.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace cairn::kernels;

namespace {

Conv2dShape square(int64_t n, int64_t c, int64_t h, int64_t o, int64_t k, int64_t stride,
                   int64_t pad) {
  int64_t out = (h + 2 * pad - k) / stride + 1;
  return {n, c, h, h, o, k, k, stride, stride, pad, pad, 1, 1, 1, out, out};
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

} // namespace

int main(int argc, char **argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  omp_set_num_threads(threads);
  setBlasThreads(threads);
  struct Case {
    const char *name;
    Conv2dShape s;
  };
  const Case cases[] = {
      {"resnet18 layer1 64-64 32x32, batch 32", square(32, 64, 32, 64, 3, 1, 1)},
      {"resnet18 layer2 128-128 16x16, batch 32", square(32, 128, 16, 128, 3, 1, 1)},
      {"resnet18 layer3 256-256 8x8, batch 32", square(32, 256, 8, 256, 3, 1, 1)},
      {"resnet18 layer4 256-512 stride 2 to 4x4, batch 32", square(32, 256, 8, 512, 3, 2, 1)},
      {"resnet18 layer4 512-512 4x4, batch 32", square(32, 512, 4, 512, 3, 1, 1)},
      {"cnn conv2 32-64 14x14, batch 64", square(64, 32, 14, 64, 3, 1, 1)},
  };
  std::printf("| shape | images a GEMM | rule's choice | workspace MiB | forward ms | "
              "input grad ms | weight grad ms | forward GFLOP/s | input grad GFLOP/s | "
              "weight grad GFLOP/s |\n| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | "
              "---: | ---: |\n");
  for (const Case &c : cases) {
    const Conv2dShape &s = c.s;
    std::vector<float> x(s.n * s.c * s.h * s.w, 0.5f), w(s.o * s.c * s.kh * s.kw, 0.25f),
        y(s.n * s.o * s.ho * s.wo), bias(s.o, 0.1f), dx(x.size()), dw(w.size()), db(s.o);
    const double gflop = 2.0 * s.n * s.o * s.ho * s.wo * s.c * s.kh * s.kw / 1e9;
    for (int64_t images = 1; images <= std::min<int64_t>(s.n, 16); images *= 2) {
      std::vector<float> ws(conv2dWorkspaceElements(s, images));
      double best[3] = {1e9, 1e9, 1e9};
      for (int rep = 0; rep < 7; ++rep) {
        auto t = std::chrono::steady_clock::now();
        conv2dForward<float>(s, x.data(), w.data(), bias.data(), y.data(), ws.data(), images);
        best[0] = std::min(best[0], seconds(t));
        t = std::chrono::steady_clock::now();
        conv2dBackwardInput<float>(s, y.data(), w.data(), dx.data(), ws.data(), images);
        best[1] = std::min(best[1], seconds(t));
        t = std::chrono::steady_clock::now();
        conv2dBackwardWeight<float>(s, y.data(), x.data(), dw.data(), db.data(), ws.data(),
                                    images);
        best[2] = std::min(best[2], seconds(t));
      }
      const bool chosen = images == conv2dImagesPerGemm(s, ConvPass::Forward);
      std::printf("| %s | %lld | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f |\n", c.name,
                  static_cast<long long>(images), chosen ? "forward, input grad" : "",
                  ws.size() * 4.0 / 1048576, best[0] * 1e3, best[1] * 1e3, best[2] * 1e3,
                  gflop / best[0], gflop / best[1], gflop / best[2]);
    }
  }
}
