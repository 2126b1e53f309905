//===- DataFiles.h - IDX and .npy files for the runtime tests ----*- C++ -*-===//
#ifndef CAIRN_TEST_UNIT_RUNTIME_DATAFILES_H
#define CAIRN_TEST_UNIT_RUNTIME_DATAFILES_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cairn::runtime::test {

/// An IDX file of u8 (0x08) or i32 (0x0C) elements; `body` is already in
/// IDX byte order.
inline std::string idxFile(unsigned char type, const std::vector<uint32_t> &dims,
                           const std::string &body) {
  std::string s = {0, 0, char(type), char(dims.size())};
  for (uint32_t d : dims)
    s += {char(d >> 24), char(d >> 16), char(d >> 8), char(d)};
  return s + body;
}

/// A version 1.0 .npy file of dtype `descr` ("<f4", "|u1", ...).
inline std::string npyFile(const std::string &descr, const std::vector<int64_t> &shape,
                           const std::string &data) {
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ", ";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += char(header.size() & 0xff);
  s += char(header.size() >> 8);
  return s + header + data;
}

/// The bytes of `values` as stored in memory (little-endian).
template <typename T> std::string rawBytes(const std::vector<T> &values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), values.data(), s.size());
  return s;
}

} // namespace cairn::runtime::test

#endif // CAIRN_TEST_UNIT_RUNTIME_DATAFILES_H
