//===- Collective.cpp - What the ranks of one model agree on --------------===//
#include "runtime/Collective.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>

namespace cairn::runtime {

namespace {

constexpr const char *kPeerFailure = "a device failed; its error is reported above";

template <typename T> void append(std::string &out, const T &value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

/// Reads the serialised tensors of one rank (gatherTensors' format, which
/// never leaves the run: native byte order).
class Reader {
public:
  explicit Reader(const std::string &bytes) : bytes(bytes) {}
  bool done() const { return at == bytes.size(); }
  template <typename T> bool read(T &value) {
    if (bytes.size() - at < sizeof(value))
      return false;
    std::memcpy(&value, bytes.data() + at, sizeof(value));
    at += sizeof(value);
    return true;
  }
  bool read(void *data, size_t size) {
    if (bytes.size() - at < size)
      return false;
    std::memcpy(data, bytes.data() + at, size);
    at += size;
    return true;
  }

private:
  const std::string &bytes;
  size_t at = 0;
};

std::string serialize(const TensorMap &tensors) {
  std::string out;
  for (const auto &[name, tensor] : tensors) {
    append(out, static_cast<uint64_t>(name.size()));
    out += name;
    append(out, static_cast<int32_t>(tensor.dtype));
    append(out, static_cast<uint64_t>(tensor.shape.size()));
    for (int64_t dim : tensor.shape)
      append(out, dim);
    append(out, static_cast<uint64_t>(tensor.bytes.size()));
    out.append(reinterpret_cast<const char *>(tensor.bytes.data()), tensor.bytes.size());
  }
  return out;
}

absl::Status deserializeInto(const std::string &bytes, int rank, TensorMap &tensors) {
  Reader reader(bytes);
  auto corrupt = [&] {
    return absl::DataLossError(
        absl::StrFormat("the tensors gathered from device %d are cut short", rank));
  };
  while (!reader.done()) {
    uint64_t nameSize, rankSize, byteSize;
    int32_t dtype;
    if (!reader.read(nameSize) || nameSize > bytes.size())
      return corrupt();
    std::string name(nameSize, '\0');
    if (!reader.read(name.data(), nameSize) || !reader.read(dtype) || !reader.read(rankSize) ||
        rankSize > bytes.size())
      return corrupt();
    HostTensor tensor;
    tensor.dtype = static_cast<DType>(dtype);
    tensor.shape.resize(rankSize);
    for (int64_t &dim : tensor.shape)
      if (!reader.read(dim))
        return corrupt();
    if (!reader.read(byteSize) || byteSize > bytes.size())
      return corrupt();
    tensor.bytes.resize(byteSize);
    if (!reader.read(tensor.bytes.data(), byteSize))
      return corrupt();
    if (!tensors.emplace(name, std::move(tensor)).second)
      return absl::InternalError(absl::StrFormat(
          "tensor '%s' was gathered from device %d and from another device", name, rank));
  }
  return absl::OkStatus();
}

} // namespace

absl::Status agree(Transport &transport, absl::Status local) {
  if (transport.size() == 1)
    return local;
  // A failure is its message after a '!', so that an empty message counts.
  absl::StatusOr<std::vector<std::string>> errors = transport.gather(
      local.ok() ? std::string() : "!" + std::string(local.message()), /*root=*/0);
  if (!errors.ok())
    return errors.status();
  unsigned char failed = 0;
  if (transport.rank() == 0) {
    // Each message once, with the devices that gave it, in rank order.
    std::vector<std::pair<std::string, std::vector<int>>> messages;
    for (int rank = 0; rank < static_cast<int>(errors->size()); ++rank) {
      if ((*errors)[rank].empty())
        continue;
      failed = 1;
      std::string message = (*errors)[rank].substr(1);
      auto it = messages.begin();
      while (it != messages.end() && it->first != message)
        ++it;
      if (it == messages.end())
        messages.push_back({message, {rank}});
      else
        it->second.push_back(rank);
    }
    // Every device failing alike failed as the model: no device to name.
    if (messages.size() == 1 && static_cast<int>(messages[0].second.size()) == transport.size())
      absl::FPrintF(stderr, "error: %s\n", messages[0].first);
    else
      for (const auto &[message, ranks] : messages)
        absl::FPrintF(stderr, "error: device%s %s: %s\n", ranks.size() > 1 ? "s" : "",
                      absl::StrJoin(ranks, ", "), message);
    std::fflush(stderr);
  }
  if (absl::Status status = transport.broadcast(&failed, sizeof(failed), /*root=*/0);
      !status.ok())
    return status;
  return failed ? absl::AbortedError(kPeerFailure) : absl::OkStatus();
}

bool isPeerFailure(const absl::Status &status) {
  return status.code() == absl::StatusCode::kAborted && status.message() == kPeerFailure;
}

absl::StatusOr<TensorMap> gatherTensors(Transport &transport, TensorMap mine, int root) {
  if (transport.size() == 1)
    return mine;
  absl::StatusOr<std::vector<std::string>> parts = transport.gather(serialize(mine), root);
  if (!parts.ok())
    return parts.status();
  TensorMap tensors;
  for (int rank = 0; rank < static_cast<int>(parts->size()); ++rank)
    if (absl::Status status = deserializeInto((*parts)[rank], rank, tensors); !status.ok())
      return status;
  return tensors;
}

} // namespace cairn::runtime
