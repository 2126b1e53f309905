//===- Dataset.h - Training and test examples, shuffled and batched -*- C++ -*-===//
//
// A data directory holds, per split, either IDX files (MNIST layout)
//   train-images-idx3-ubyte  train-labels-idx1-ubyte   (training)
//   t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte    (test)
// each plain or gzipped (".gz" preferred when both exist), or NumPy files
//   train_images.npy train_labels.npy test_images.npy test_labels.npy.
// Images are uint8 [N, ...] (scaled by 1/255) or floating [N, ...] (used as
// they are), N examples whose element count must match the model's image
// input without its batch dimension; labels are integers [N] in
// [0, classes). The optional normalisation then maps x to (x - mean) / std,
// computed in float like torchvision's ToTensor + Normalize.
//
// Shuffling: epoch e (0-based) of a run with seed s visits the examples in
// the order p computed as follows (all arithmetic on uint64, wrapping):
//   state = s + 0x9E3779B97F4A7C15 * (e + 1)
//   next(): state += 0x9E3779B97F4A7C15; z = state;
//           z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
//           z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//           return z ^ (z >> 31);
//   p = [0, 1, ..., n-1]
//   for i = n-1 down to 1: j = next() % (i + 1); swap(p[i], p[j])
// Batch k of the epoch is p[k*B : (k+1)*B]; a last partial batch is dropped.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_DATASET_H
#define CAIRN_RUNTIME_DATASET_H

#include "runtime/Tensor.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn::runtime {

/// The order in which epoch `epoch` visits `n` examples (see above).
std::vector<int64_t> epochPermutation(int64_t n, uint64_t seed, int64_t epoch);

/// (x - mean) / std after the uint8 scaling; the default changes nothing.
struct Normalization {
  float mean = 0;
  float std = 1;
};

/// What the model's inputs take, for checking and converting the data.
struct InputFormat {
  std::string imageName;              // for messages: the input's name
  DType imageDType = DType::F32;      // any floating dtype
  std::vector<int64_t> imageShape;    // with the batch dimension
  DType labelDType = DType::I64;      // I32 or I64
  int64_t classes = 0;
};

enum class Split { Train, Test };

/// One split, held as read (uint8 or float32) and converted per batch.
class Examples {
public:
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  int64_t label(int64_t index) const { return labels[index]; }

  /// Writes examples indices[0..count) as the model's image input (in its
  /// dtype, normalised) at `image` and its label input at `label`.
  void fillBatch(const int64_t *indices, int64_t count, unsigned char *image,
                 unsigned char *label) const;

private:
  friend absl::StatusOr<std::optional<Examples>>
  loadSplit(const std::string &dir, Split split, const InputFormat &format,
            const Normalization &normalization);

  HostTensor images; // U8 or F32, [N, exampleElements...]
  std::vector<int64_t> labels;
  int64_t exampleElements = 0;
  InputFormat format;
  Normalization normalization;
};

/// Loads `split` from `dir`; nullopt when neither format's files for it
/// exist (an image file without its label file is an error). Errors name
/// the file.
absl::StatusOr<std::optional<Examples>> loadSplit(const std::string &dir, Split split,
                                                  const InputFormat &format,
                                                  const Normalization &normalization);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_DATASET_H
