//===- Pooling.cu - Max and average pooling forward through cuDNN ---------===//
//
// maxPool2dForward and avgPool2dForward of Library.h. cuDNN's
// cudnnPoolingForward computes them when it can express the shape; the
// semantics then agree with kernels::maxPool2dForward / avgPool2dForward:
//  - max pooling skips padded positions (as a -inf padding would) and, with
//    CUDNN_PROPAGATE_NAN, returns NaN for a window holding one, as the CPU;
//    CUDNN_POOLING_MAX_DETERMINISTIC (the forward is the same either way);
//  - average pooling divides by kh * kw (count_include_pad) or by the real
//    elements; without ceil_mode no window reaches past the padding, so
//    PyTorch's clipping never applies.
// cuDNN cannot express dilation, nor the extra window of ceil_mode (its
// output size is always floor's), nor padding over half the window (a
// window of padding alone, which cuDNN fills with -FLT_MAX rather than
// -inf), nor tensors beyond int indexing: those shapes go to Cairn's own
// maxPool2dForwardDirect / avgPool2dForwardDirect (Kernels.h). The site
// remembers which path its shape takes, and its descriptors.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Library.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Kernels.h"

#include <cudnn.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>

namespace cairn::cuda {

namespace {

using kernels::Pool2dShape;

template <typename T> struct DnnType;
template <> struct DnnType<float> { static constexpr cudnnDataType_t value = CUDNN_DATA_FLOAT; };
template <> struct DnnType<double> { static constexpr cudnnDataType_t value = CUDNN_DATA_DOUBLE; };

/// Everything a site's path and descriptors depend on.
struct Key {
  Pool2dShape s;
  cudnnPoolingMode_t mode;
  cudnnDataType_t type;

  auto fields() const {
    return std::tie(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.dh, s.dw, s.ho, s.wo,
                    mode, type);
  }
  bool operator==(const Key &other) const { return fields() == other.fields(); }
};

/// A site's path and, when it goes through cuDNN, its descriptors. Setting
/// up synchronises nothing, so it may happen while the step is captured.
class PoolSite final : public SiteState {
public:
  explicit PoolSite(const Key &key) : key(key) {}
  ~PoolSite() override {
    // Destruction cannot fail in a way worth reporting.
    if (pool)
      cudnnDestroyPoolingDescriptor(pool);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (x)
      cudnnDestroyTensorDescriptor(x);
  }
  PoolSite(const PoolSite &) = delete;
  PoolSite &operator=(const PoolSite &) = delete;

  Key key;
  bool direct = true;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnPoolingDescriptor_t pool = nullptr;
};

bool fitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

/// Whether cuDNN pooling computes exactly kernels::*Pool2dForward here (the
/// output size is checked against cuDNN's once the descriptors exist).
bool cudnnCanExpress(const Pool2dShape &s) {
  return s.dh == 1 && s.dw == 1 && s.kh > 0 && s.kw > 0 && s.sh > 0 && s.sw > 0 && s.ph >= 0 &&
         s.pw >= 0 && 2 * s.ph <= s.kh && 2 * s.pw <= s.kw && s.n > 0 && s.c > 0 && s.h > 0 &&
         s.w > 0 && fitsInt(s.n * s.c * s.h * s.w) && fitsInt(s.n * s.c * s.ho * s.wo);
}

template <typename T>
PoolSite &siteFor(Context &cx, int siteId, const Pool2dShape &s, cudnnPoolingMode_t mode) {
  const Key key{s, mode, DnnType<T>::value};
  if (auto *site = dynamic_cast<PoolSite *>(cx.site(siteId)); site && site->key == key)
    return *site;
  auto site = std::make_unique<PoolSite>(key);
  if (cudnnCanExpress(s)) {
    const cudnnDataType_t type = DnnType<T>::value;
    const int n = static_cast<int>(s.n), c = static_cast<int>(s.c);
    CAIRN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&site->x));
    CAIRN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(site->x, CUDNN_TENSOR_NCHW, type, n, c,
                                                 static_cast<int>(s.h), static_cast<int>(s.w)));
    CAIRN_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&site->pool));
    CAIRN_CUDNN_CHECK(cudnnSetPooling2dDescriptor(site->pool, mode, CUDNN_PROPAGATE_NAN,
                                                  static_cast<int>(s.kh), static_cast<int>(s.kw),
                                                  static_cast<int>(s.ph), static_cast<int>(s.pw),
                                                  static_cast<int>(s.sh), static_cast<int>(s.sw)));
    int on = 0, oc = 0, oh = 0, ow = 0;
    CAIRN_CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(site->pool, site->x, &on, &oc, &oh, &ow));
    // A different size is ceil_mode's extra window: not cuDNN's to compute.
    if (on == s.n && oc == s.c && oh == s.ho && ow == s.wo) {
      CAIRN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&site->y));
      CAIRN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(site->y, CUDNN_TENSOR_NCHW, type, n, c, oh, ow));
      site->direct = false;
    }
  }
  PoolSite &result = *site;
  cx.setSite(siteId, std::move(site));
  return result;
}

template <typename T> void poolForward(Context &cx, PoolSite &site, const T *x, T *y) {
  const T one = 1, zero = 0;
  CAIRN_CUDNN_CHECK(cudnnPoolingForward(cx.dnn, site.pool, &one, site.x, x, &zero, site.y, y));
}

} // namespace

template <typename T>
void maxPool2dForward(Context &cx, int site, const Pool2dShape &s, const kernels::StoredAs<T> *x,
                      kernels::StoredAs<T> *y) {
  if (s.n * s.c * s.ho * s.wo == 0)
    return;
  if constexpr (!std::is_same_v<kernels::StoredAs<T>, T>) {
    // Half storage: no cuDNN site (its NaN and -inf padding are not the
    // CPU's); the direct kernel compares the widened elements.
    (void)site;
    maxPool2dForwardDirect<T>(cx, s, x, y);
  } else {
    PoolSite &plan = siteFor<T>(cx, site, s, CUDNN_POOLING_MAX_DETERMINISTIC);
    if (plan.direct)
      maxPool2dForwardDirect<T>(cx, s, x, y);
    else
      poolForward(cx, plan, x, y);
  }
}

template <typename T>
void avgPool2dForward(Context &cx, int site, const Pool2dShape &s, bool countIncludePad, const T *x,
                      T *y) {
  if (s.n * s.c * s.ho * s.wo == 0)
    return;
  PoolSite &plan = siteFor<T>(cx, site, s,
                              countIncludePad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                              : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
  if (plan.direct)
    avgPool2dForwardDirect(cx, s, countIncludePad, x, y);
  else
    poolForward(cx, plan, x, y);
}

#define CAIRN_INSTANTIATE(T)                                                                       \
  template void maxPool2dForward<T>(Context &, int, const Pool2dShape &, const T *, T *);          \
  template void avgPool2dForward<T>(Context &, int, const Pool2dShape &, bool, const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE
template void maxPool2dForward<kernels::F16>(Context &, int, const Pool2dShape &, const uint16_t *,
                                             uint16_t *);
template void maxPool2dForward<kernels::Bf16>(Context &, int, const Pool2dShape &, const uint16_t *,
                                              uint16_t *);

} // namespace cairn::cuda
