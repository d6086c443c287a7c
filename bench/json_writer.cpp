#include "json_writer.hpp"

#include <cmath>
#include <cstdio>

namespace scatterptx_bench {
namespace {

std::string escape(const std::string& text) {
  std::string escaped = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': escaped += "\\\""; break;
      case '\\': escaped += "\\\\"; break;
      case '\n': escaped += "\\n"; break;
      case '\t': escaped += "\\t"; break;
      case '\r': escaped += "\\r"; break;
      default:
        if (c < 0x20) {
          char code[8];
          std::snprintf(code, sizeof(code), "\\u%04x", c);
          escaped += code;
        } else {
          escaped += static_cast<char>(c);
        }
    }
  }
  return escaped + "\"";
}

}  // namespace

void JsonWriter::newline() {
  stream_ << '\n' << std::string(2 * has_member_.size(), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_member_.empty()) {
    if (has_member_.back()) stream_ << ',';
    has_member_.back() = true;
    newline();
  }
}

void JsonWriter::key(const std::string& name) {
  before_value();
  stream_ << escape(name) << ": ";
  after_key_ = true;
}

void JsonWriter::begin_object() {
  before_value();
  stream_ << '{';
  has_member_.push_back(false);
}

void JsonWriter::end_object() {
  const bool had_members = has_member_.back();
  has_member_.pop_back();
  if (had_members) newline();
  stream_ << '}';
  if (has_member_.empty()) stream_ << '\n';
}

void JsonWriter::begin_array() {
  before_value();
  stream_ << '[';
  has_member_.push_back(false);
}

void JsonWriter::end_array() {
  const bool had_members = has_member_.back();
  has_member_.pop_back();
  if (had_members) newline();
  stream_ << ']';
}

void JsonWriter::value(const std::string& text) {
  before_value();
  stream_ << escape(text);
}

void JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    stream_ << "null";
    return;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", number);
  stream_ << text;
}

void JsonWriter::value(int64_t number) {
  before_value();
  stream_ << number;
}

void JsonWriter::value(bool flag) {
  before_value();
  stream_ << (flag ? "true" : "false");
}

void JsonWriter::null() {
  before_value();
  stream_ << "null";
}

void JsonWriter::value(const std::vector<double>& numbers) {
  // Raw run times on one line: a list of 20 numbers per line reads better.
  before_value();
  stream_ << '[';
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i > 0) stream_ << ", ";
    char text[32];
    std::snprintf(text, sizeof(text), "%.9g", std::isfinite(numbers[i]) ? numbers[i] : 0.0);
    stream_ << (std::isfinite(numbers[i]) ? text : "null");
  }
  stream_ << ']';
}

}  // namespace scatterptx_bench
