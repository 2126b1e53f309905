//===- Safetensors.cpp - safetensors weights files ------------------------===//
#include "runtime/Safetensors.h"

#include "runtime/File.h"

#include "absl/strings/str_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace cairn::runtime {

namespace {

// The reference implementation's limit; a larger size is a corrupt file.
constexpr uint64_t kMaxHeaderSize = 100'000'000;

using json = nlohmann::json;

absl::Status fail(const std::string &path, const std::string &what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, what));
}

/// Parses `text`; nlohmann keeps the last of duplicate keys silently but the
/// spec forbids them, so the parse callback records the first one.
json parseHeader(const std::string &text, std::string &duplicate) {
  std::vector<std::set<std::string>> open;
  json::parser_callback_t callback = [&](int, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::object_start)
      open.emplace_back();
    else if (event == json::parse_event_t::object_end && !open.empty())
      open.pop_back();
    else if (event == json::parse_event_t::key && !open.empty() && duplicate.empty() &&
             !open.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  return json::parse(text, callback, /*allow_exceptions=*/false);
}

/// A JSON array of non-negative integers, or nullopt.
std::optional<std::vector<uint64_t>> unsignedArray(const json &value) {
  if (!value.is_array())
    return std::nullopt;
  std::vector<uint64_t> out;
  for (const json &element : value) {
    if (!element.is_number_unsigned())
      return std::nullopt;
    out.push_back(element.get<uint64_t>());
  }
  return out;
}

struct Entry {
  std::string name;
  uint64_t begin, end;
};

} // namespace

absl::StatusOr<TensorMap> loadSafetensors(const std::string &path,
                                          std::map<std::string, std::string> *metadata) {
  absl::StatusOr<std::string> file = readWholeFile(path);
  if (!file.ok())
    return file.status();
  const std::string &data = *file;
  if (data.size() < 8)
    return fail(path, absl::StrFormat("truncated header: expected an 8-byte header size "
                                      "but the file has %d bytes",
                                      data.size()));
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | static_cast<unsigned char>(data[i]);
  if (headerSize > kMaxHeaderSize)
    return fail(path, absl::StrFormat("header size %d is larger than the limit of %d bytes",
                                      headerSize, kMaxHeaderSize));
  if (headerSize > data.size() - 8)
    return fail(path, absl::StrFormat("truncated header: expected %d header bytes but found %d",
                                      headerSize, data.size() - 8));
  std::string header = data.substr(8, headerSize);
  if (header.empty() || header[0] != '{')
    return fail(path, "header must be a JSON object starting with '{'");
  std::string duplicate;
  json root = parseHeader(header, duplicate);
  if (root.is_discarded())
    return fail(path, "header is not well-formed JSON");
  if (!root.is_object())
    return fail(path, "header must be a JSON object");
  if (!duplicate.empty())
    return fail(path, absl::StrFormat("header has the key '%s' twice", duplicate));

  size_t bufferStart = 8 + headerSize;
  uint64_t bufferSize = data.size() - bufferStart;
  TensorMap tensors;
  std::vector<Entry> entries;
  for (const auto &[name, info] : root.items()) {
    if (name == "__metadata__") {
      if (!info.is_object())
        return fail(path, "__metadata__ must be an object of strings");
      for (const auto &[key, value] : info.items()) {
        if (!value.is_string())
          return fail(path, absl::StrFormat("__metadata__ value of '%s' must be a string", key));
        if (metadata)
          (*metadata)[key] = value.get<std::string>();
      }
      continue;
    }
    auto bad = [&](const std::string &what) {
      return fail(path, absl::StrFormat("tensor '%s': %s", name, what));
    };
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
        !info.contains("data_offsets") || info.size() != 3)
      return bad("expected an object with exactly 'dtype', 'shape' and 'data_offsets'");
    if (!info["dtype"].is_string())
      return bad("dtype must be a string");
    std::string dtypeText = info["dtype"].get<std::string>();
    std::optional<DType> dtype = parseDType(dtypeText);
    if (!dtype)
      return bad(absl::StrFormat("unsupported dtype '%s', expected one of F32 F64 F16 BF16 "
                                 "I32 I64 U8",
                                 dtypeText));
    std::optional<std::vector<uint64_t>> shape = unsignedArray(info["shape"]);
    if (!shape)
      return bad("shape must be an array of non-negative integers");
    std::optional<std::vector<uint64_t>> offsets = unsignedArray(info["data_offsets"]);
    if (!offsets || offsets->size() != 2)
      return bad("data_offsets must be two non-negative integers [begin, end]");
    HostTensor tensor;
    tensor.dtype = *dtype;
    for (uint64_t dim : *shape) {
      if (dim > uint64_t(INT64_MAX))
        return bad("shape has a dimension that does not fit in 64 bits");
      tensor.shape.push_back(static_cast<int64_t>(dim));
    }
    uint64_t begin = (*offsets)[0], end = (*offsets)[1];
    if (begin > end || end > bufferSize)
      return bad(absl::StrFormat("data_offsets [%d, %d] are outside the %d-byte data buffer",
                                 begin, end, bufferSize));
    size_t size = dtypeSize(*dtype);
    absl::StatusOr<int64_t> numel =
        checkedNumel(tensor.shape, static_cast<int64_t>(bufferSize / size) + 1);
    if (!numel.ok() || uint64_t(*numel) * size != end - begin)
      return bad(absl::StrFormat("%s %s needs %s bytes but data_offsets [%d, %d] hold %d",
                                 dtypeText, formatShape(tensor.shape),
                                 numel.ok() ? absl::StrFormat("%d", uint64_t(*numel) * size)
                                            : std::string("more than the file's"),
                                 begin, end, end - begin));
    tensor.bytes.assign(data.begin() + static_cast<ptrdiff_t>(bufferStart + begin),
                        data.begin() + static_cast<ptrdiff_t>(bufferStart + end));
    entries.push_back({name, begin, end});
    tensors.emplace(name, std::move(tensor));
  }

  // The spec: the tensors tile the buffer, no holes and no overlap.
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t covered = 0;
  std::string previous;
  for (const Entry &entry : entries) {
    if (entry.begin < covered)
      return fail(path, absl::StrFormat("tensor '%s' at [%d, %d] overlaps tensor '%s' "
                                        "ending at %d",
                                        entry.name, entry.begin, entry.end, previous, covered));
    if (entry.begin > covered)
      return fail(path, absl::StrFormat("tensor '%s' starts at %d but the previous data ends "
                                        "at %d: the data buffer has a hole",
                                        entry.name, entry.begin, covered));
    covered = entry.end;
    previous = entry.name;
  }
  if (covered != bufferSize)
    return fail(path, absl::StrFormat("the tensors cover %d bytes of the data buffer but it "
                                      "has %d",
                                      covered, bufferSize));
  return tensors;
}

absl::Status saveSafetensors(const std::string &path, const TensorMap &tensors,
                             const std::map<std::string, std::string> &metadata) {
  // ordered_json keeps __metadata__ first and the tensors in buffer order.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  std::vector<absl::string_view> pieces = {"", ""};
  for (const auto &[name, tensor] : tensors) {
    if (name.empty() || name == "__metadata__")
      return fail(path, absl::StrFormat("cannot save a tensor named '%s'", name));
    absl::StatusOr<int64_t> numel = checkedNumel(tensor.shape);
    if (!numel.ok())
      return fail(path, absl::StrFormat("tensor '%s': %s", name, numel.status().message()));
    uint64_t size = uint64_t(*numel) * dtypeSize(tensor.dtype);
    if (tensor.bytes.size() != size)
      return fail(path, absl::StrFormat("tensor '%s': %s %s needs %d bytes but has %d", name,
                                        dtypeName(tensor.dtype), formatShape(tensor.shape),
                                        size, tensor.bytes.size()));
    header[name] = {{"dtype", dtypeName(tensor.dtype)},
                    {"shape", tensor.shape},
                    {"data_offsets", {offset, offset + size}}};
    offset += size;
    pieces.emplace_back(reinterpret_cast<const char *>(tensor.bytes.data()),
                        tensor.bytes.size());
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception &e) {
    return fail(path, absl::StrFormat("cannot encode the header: %s", e.what()));
  }
  // As the reference implementation does, so the buffer starts 8-aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string sizeBytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    sizeBytes[i] = static_cast<char>((uint64_t(text.size()) >> (8 * i)) & 0xff);
  pieces[0] = sizeBytes;
  pieces[1] = text;
  return writeFileAtomically(path, pieces);
}

absl::Status checkTensor(const TensorMap &tensors, const std::string &name, DType dtype,
                         const std::vector<int64_t> &shape, const std::string &path) {
  auto it = tensors.find(name);
  if (it == tensors.end())
    return absl::NotFoundError(absl::StrFormat("%s: tensor '%s' is missing", path, name));
  const HostTensor &tensor = it->second;
  if (tensor.dtype != dtype)
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: tensor '%s' has dtype %s but the model expects %s", path, name,
                        dtypeName(tensor.dtype), dtypeName(dtype)));
  if (tensor.shape != shape)
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: tensor '%s' has shape %s but the model expects %s", path, name,
                        formatShape(tensor.shape), formatShape(shape)));
  return absl::OkStatus();
}

} // namespace cairn::runtime
