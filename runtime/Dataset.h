//===- Dataset.h - Training and test examples, shuffled and batched -*- C++ -*-===//
//
// A data directory holds, per split, the model's inputs as arrays [N, ...]
// of N examples, whose element count per example must match the input's
// without its batch dimension:
//   - one NumPy file per input, named after it: train_<input>.npy and
//     test_<input>.npy (a regression's train_x.npy and train_y.npy);
//   - or, for a model with one floating-point input and at most one integer
//     input (an image classifier, an autoencoder), MNIST's layout: IDX files
//       train-images-idx3-ubyte  train-labels-idx1-ubyte   (training)
//       t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte    (test)
//     each plain or gzipped (".gz" preferred when both exist), or NumPy
//     files train_images.npy train_labels.npy test_images.npy
//     test_labels.npy; the images feed the floating-point input, the labels
//     (when the model has an integer input) the integer one.
// Floating-point inputs take uint8 arrays (scaled by 1/255) or floating ones
// (as they are); integer inputs take uint8, int32 or int64 arrays, class
// indices in [0, classes) where the loss is a cross-entropy. The optional
// normalisation maps the images and uint8 arrays (pixels) x to
// (x - mean) / std, computed in float like torchvision's ToTensor +
// Normalize; other floating arrays (a regression's targets) are fed as they
// are.
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

/// One model input the data feeds.
struct InputFormat {
  std::string name;           // the model's input
  DType dtype = DType::F32;   // floating, I32 or I64
  std::vector<int64_t> shape; // with the batch dimension
  int64_t classes = 0;        // > 0: class indices below it
};

enum class Split { Train, Test };

/// One split, held as read and converted per batch.
class Examples {
public:
  int64_t size() const { return count; }

  /// Writes examples indices[0..n) of input i (in the order loadSplit got
  /// the formats) at destinations[i], in its dtype, normalised; a null
  /// destination skips its input (one on another device).
  void fillBatch(const int64_t *indices, int64_t n,
                 const std::vector<unsigned char *> &destinations) const;

private:
  friend struct ExamplesReader; // Dataset.cpp

  struct Column {
    InputFormat format;
    HostTensor data; // [N, ...]: U8, I32, I64, F32 or F64
    int64_t exampleElements = 0;
    bool normalize = false; // images and uint8 arrays
  };
  std::vector<Column> columns;
  int64_t count = 0;
  Normalization normalization;
};

/// Examples of `inputs` read from the NumPy files paths[i] (what `predict`
/// feeds): uint8 arrays scaled and normalised, the others as they are.
absl::StatusOr<Examples> loadArrays(const std::vector<InputFormat> &inputs,
                                    const std::vector<std::string> &paths,
                                    const Normalization &normalization);

/// Loads `split` of `inputs` from `dir`; nullopt when none of the files
/// for it exist (some of them only is an error). Errors name the file.
absl::StatusOr<std::optional<Examples>> loadSplit(const std::string &dir, Split split,
                                                  const std::vector<InputFormat> &inputs,
                                                  const Normalization &normalization);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_DATASET_H
