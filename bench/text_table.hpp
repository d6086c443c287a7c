// A plain-text table with aligned columns, for the terminal.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace scatterptx_bench {

class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string title;
    Align align;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // A row with fewer cells than columns is padded with empty cells.
  void add_row(std::vector<std::string> cells);

  // Columns separated by two spaces, a dashed rule under the titles.
  void print(std::ostream& stream) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// value with `decimals` digits after the point.
std::string format_fixed(double value, int decimals);

// A time in ms with about four significant digits: 21.05, 3.432, 0.2215.
std::string format_ms(double ms);

}  // namespace scatterptx_bench
