// A small streaming JSON writer: nesting, commas and string escaping.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace scatterptx_bench {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& stream) : stream_(stream) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The key of the next value inside an object.
  void key(const std::string& name);

  void value(const std::string& text);
  void value(const char* text) { value(std::string(text)); }
  void value(double number);  // non-finite numbers are written as null
  void value(int64_t number);
  void value(int number) { value(static_cast<int64_t>(number)); }
  void value(uint32_t number) { value(static_cast<int64_t>(number)); }
  void value(bool flag);
  void null();
  void value(const std::vector<double>& numbers);

  // key(name) then value(v), for the common case.
  template <typename T>
  void field(const std::string& name, const T& v) {
    key(name);
    value(v);
  }

 private:
  void before_value();
  void newline();

  std::ostream& stream_;
  // One entry per open container: whether it has a member yet.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

}  // namespace scatterptx_bench
