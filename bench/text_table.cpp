#include "text_table.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace scatterptx_bench {

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(std::max(cells.size(), columns_.size()));
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& stream) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = columns_[c].title.size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  auto print_cells = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string padding(widths[c] - cells[c].size(), ' ');
      const bool last = c + 1 == columns_.size();
      if (columns_[c].align == Align::right) {
        line += padding + cells[c];
      } else {
        line += cells[c] + (last ? "" : padding);
      }
      if (!last) line += "  ";
    }
    stream << line << '\n';
  };
  std::vector<std::string> titles;
  std::vector<std::string> rule;
  for (size_t c = 0; c < columns_.size(); ++c) {
    titles.push_back(columns_[c].title);
    rule.push_back(std::string(widths[c], '-'));
  }
  print_cells(titles);
  print_cells(rule);
  for (const auto& row : rows_) print_cells(row);
}

std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string format_ms(double ms) {
  const int decimals = ms >= 100 ? 1 : ms >= 10 ? 2 : ms >= 1 ? 3 : 4;
  return format_fixed(ms, decimals);
}

}  // namespace scatterptx_bench
