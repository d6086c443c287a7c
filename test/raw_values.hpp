// What the validation tests write into arguments and read from messages.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

namespace scatterptx_test {

// Stores a value no enumerator has. Assigning it through static_cast would
// be undefined in C++ (outside the enumeration's range); a C caller can pass
// it, so the library must refuse it.
template <typename Enum>
void set_raw_enum(Enum& field, int value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized on this ABI");
  std::memcpy(&field, &value, sizeof value);
}

inline std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace scatterptx_test
