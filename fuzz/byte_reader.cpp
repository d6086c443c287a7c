#include "byte_reader.hpp"

namespace scatterptx::fuzz {

uint64_t ByteReader::take(unsigned bytes) {
  uint64_t value = 0;
  for (unsigned i = 0; i < bytes; ++i, ++at_) {
    if (at_ < size_) value |= uint64_t{data_[at_]} << (8 * i);
  }
  return value;
}

}  // namespace scatterptx::fuzz
