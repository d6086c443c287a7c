// Fuzz input as a sequence of little-endian fields read from the front; a
// field past the end reads as zero, so every input (and every seed a script
// writes field by field) decodes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scatterptx::fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  uint64_t u64() { return take(8); }
  uint32_t u32() { return static_cast<uint32_t>(take(4)); }
  uint8_t u8() { return static_cast<uint8_t>(take(1)); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  // One of count values, chosen by a byte.
  template <typename T, std::size_t N>
  T pick(const T (&values)[N]) { return values[u8() % N]; }

 private:
  uint64_t take(unsigned bytes);

  const uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace scatterptx::fuzz
