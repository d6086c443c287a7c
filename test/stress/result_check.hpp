// What a call left in out, downloaded with the guard rows around it, and the
// comparisons made on it: against the float64 reference (the bound every
// test uses, testing/error_bound.hpp), byte for byte against out0 (a refused
// call), and against a twin out (a deterministic result).
#pragma once

#include <string>
#include <vector>

#include "case_inputs.hpp"
#include "reference.hpp"

namespace scatterptx_stress {

// Rows of sentinel bytes before and after every out: a write outside out
// lands there.
constexpr int64_t kGuardRows = 2;
constexpr unsigned char kGuardByte = 0x5A;

struct DownloadedOut {
  scatterptx_test::HostMatrix values;
  std::vector<unsigned char> guard_before;
  std::vector<unsigned char> guard_after;
};

// "" when every guard byte is intact, else where the first damage is.
std::string guard_damage(const DownloadedOut& got);

// "" when got holds out0 plus `repeats` times every src row whose index is
// in range, within the error bound, padding and unindexed rows untouched,
// guards intact; else what is wrong.
std::string check_result(const CaseInputs& inputs, const DownloadedOut& got, int repeats);

// "" when got is out0 byte for byte and the guards are intact.
std::string check_untouched(const CaseInputs& inputs, const DownloadedOut& got);

// "" when a and b hold the same bytes, else where they first differ.
std::string check_identical(const DownloadedOut& a, const DownloadedOut& b);

}  // namespace scatterptx_stress
