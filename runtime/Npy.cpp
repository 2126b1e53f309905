//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The header is a Python dict literal written by numpy's format.py, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and a newline. A small parser for exactly that subset
// (strings, True/False, tuples of integers) beats a general literal parser.
//
//===----------------------------------------------------------------------===//
#include "runtime/Npy.h"

#include "runtime/File.h"

#include "absl/strings/str_format.h"

#include <cstring>
#include <map>

namespace cairn::runtime {

namespace {

struct NpyValue {
  enum Kind { String, Bool, Tuple } kind;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

class HeaderParser {
public:
  explicit HeaderParser(absl::string_view text) : text(text) {}

  /// Parses the dict into `out`; returns an error message or "".
  std::string parse(std::map<std::string, NpyValue> &out) {
    skipSpace();
    if (!consume('{'))
      return "expected '{' at the start of the header dict";
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return "expected a quoted key in the header dict";
      skipSpace();
      if (!consume(':'))
        return absl::StrFormat("expected ':' after key '%s'", key);
      skipSpace();
      NpyValue value;
      if (std::string err = parseValue(value); !err.empty())
        return absl::StrFormat("key '%s': %s", key, err);
      if (!out.emplace(key, std::move(value)).second)
        return absl::StrFormat("duplicate key '%s'", key);
      skipSpace();
      if (consume('}'))
        break;
      if (!consume(','))
        return "expected ',' or '}' in the header dict";
    }
    skipSpace();
    if (pos != text.size())
      return "unexpected text after the header dict";
    return "";
  }

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\t'))
      ++pos;
  }
  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool consumeWord(absl::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }
  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == absl::string_view::npos)
      return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  bool parseInt(int64_t &out) {
    size_t start = pos;
    out = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (out > (INT64_MAX - 9) / 10)
        return false;
      out = out * 10 + (text[pos++] - '0');
    }
    // numpy writes Python ints; older versions wrote "3L" on Python 2.
    if (pos > start && pos < text.size() && text[pos] == 'L')
      ++pos;
    return pos > start;
  }
  std::string parseValue(NpyValue &value) {
    if (parseString(value.text)) {
      value.kind = NpyValue::String;
      return "";
    }
    if (consumeWord("True") || consumeWord("False")) {
      value.kind = NpyValue::Bool;
      value.flag = text[pos - 1] == 'e' && text[pos - 2] == 'u';
      return "";
    }
    if (!consume('('))
      return "expected a string, True, False or a tuple";
    value.kind = NpyValue::Tuple;
    while (true) {
      skipSpace();
      if (consume(')'))
        return "";
      int64_t dim;
      if (!parseInt(dim))
        return "expected a non-negative integer in the shape tuple";
      value.ints.push_back(dim);
      skipSpace();
      if (consume(')'))
        return "";
      if (!consume(','))
        return "expected ',' or ')' in the shape tuple";
    }
  }

  absl::string_view text;
  size_t pos = 0;
};

std::optional<DType> dtypeFromDescr(const std::string &descr) {
  static const std::pair<const char *, DType> kDescrs[] = {
      {"<f2", DType::F16}, {"<f4", DType::F32}, {"<f8", DType::F64},
      {"<i4", DType::I32}, {"<i8", DType::I64}, {"|u1", DType::U8},
  };
  for (const auto &[name, dtype] : kDescrs)
    if (descr == name)
      return dtype;
  return std::nullopt;
}

uint64_t readLittleEndian(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

} // namespace

absl::StatusOr<HostTensor> readNpy(const std::string &path) {
  absl::StatusOr<std::string> file = readWholeFile(path);
  if (!file.ok())
    return file.status();
  auto fail = [&](const std::string &what) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, what));
  };
  const std::string &data = *file;
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  if (data.size() < 8)
    return fail(absl::StrFormat("truncated header: expected at least 8 bytes but found %d",
                                data.size()));
  if (std::memcmp(data.data(), "\x93NUMPY", 6) != 0)
    return fail("bad magic: expected \\x93NUMPY at the start of a .npy file");
  int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fail(absl::StrFormat("unsupported .npy version %d.%d, expected 1.0, 2.0 or 3.0",
                                major, minor));
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (data.size() < 8 + lengthBytes)
    return fail("truncated header: the header length is cut off");
  uint64_t headerLength = readLittleEndian(bytes + 8, static_cast<int>(lengthBytes));
  size_t headerStart = 8 + lengthBytes;
  if (headerLength > data.size() - headerStart)
    return fail(absl::StrFormat("truncated header: expected %d header bytes but found %d",
                                headerLength, data.size() - headerStart));

  std::map<std::string, NpyValue> dict;
  absl::string_view header(data.data() + headerStart, headerLength);
  if (std::string err = HeaderParser(header).parse(dict); !err.empty())
    return fail("bad header: " + err);
  auto descr = dict.find("descr");
  auto fortran = dict.find("fortran_order");
  auto shape = dict.find("shape");
  if (descr == dict.end() || fortran == dict.end() || shape == dict.end() || dict.size() != 3)
    return fail("bad header: expected exactly the keys 'descr', 'fortran_order' and 'shape'");
  if (descr->second.kind != NpyValue::String)
    return fail("bad header: 'descr' must be a string");
  if (fortran->second.kind != NpyValue::Bool)
    return fail("bad header: 'fortran_order' must be True or False");
  if (shape->second.kind != NpyValue::Tuple)
    return fail("bad header: 'shape' must be a tuple");
  if (fortran->second.flag)
    return fail("fortran_order is True: only C-order arrays are supported");
  std::optional<DType> dtype = dtypeFromDescr(descr->second.text);
  if (!dtype)
    return fail(absl::StrFormat("unsupported dtype '%s', expected one of '<f2' '<f4' "
                                "'<f8' '<i4' '<i8' '|u1'",
                                descr->second.text));

  HostTensor tensor;
  tensor.dtype = *dtype;
  tensor.shape = shape->second.ints;
  absl::StatusOr<int64_t> numel =
      checkedNumel(tensor.shape, (int64_t(1) << 48) / static_cast<int64_t>(dtypeSize(*dtype)));
  if (!numel.ok())
    return fail(std::string(numel.status().message()));
  size_t expected = static_cast<size_t>(*numel) * dtypeSize(*dtype);
  size_t found = data.size() - headerStart - headerLength;
  if (found != expected)
    return fail(absl::StrFormat("expected %d bytes of data for %s %s but found %d", expected,
                                descr->second.text, formatShape(tensor.shape), found));
  tensor.bytes.assign(data.begin() + static_cast<ptrdiff_t>(headerStart + headerLength),
                      data.end());
  return tensor;
}

absl::Status writeNpy(const std::string &path, const HostTensor &tensor) {
  const char *descr = nullptr;
  for (auto [name, dtype] : {std::pair{"<f2", DType::F16}, std::pair{"<f4", DType::F32},
                             std::pair{"<f8", DType::F64}, std::pair{"<i4", DType::I32},
                             std::pair{"<i8", DType::I64}, std::pair{"|u1", DType::U8}})
    if (tensor.dtype == dtype)
      descr = name;
  if (!descr)
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot write %s values as .npy", path, dtypeName(tensor.dtype)));
  // numpy's spelling: (3, 4), (3,) and ().
  std::string shape;
  for (int64_t dim : tensor.shape)
    shape += absl::StrFormat("%s%d", shape.empty() ? "" : ", ", dim);
  if (tensor.shape.size() == 1)
    shape += ",";
  std::string header =
      absl::StrFormat("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  // Magic, version, length, then the header padded with spaces to a
  // multiple of 64 bytes with its newline.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string preamble = "\x93NUMPY\x01";
  preamble += '\0';
  preamble += static_cast<char>(header.size() & 0xFF);
  preamble += static_cast<char>(header.size() >> 8);
  return writeFileAtomically(
      path, {preamble, header,
             absl::string_view(reinterpret_cast<const char *>(tensor.bytes.data()),
                               tensor.bytes.size())});
}

} // namespace cairn::runtime
