// The bad-input matrix of the C ABI, in one place: what each bad input is,
// which entry points it is passed to, what they answer, and which tests
// prove it. Three things read it:
//   - scatterptx_bad_inputs_table (bad_inputs_table.cpp) runs every host
//     case through the C ABI and prints the rows of docs/bad_inputs.md
//     (scripts/bad_inputs_doc.py renders them; a ctest keeps the page equal
//     to what it prints now);
//   - BadInputOnHost (bad_inputs_test.cpp) runs every host case and checks
//     its documented answer;
//   - BadInputOnGpu (gpu_bad_inputs_test.cpp) runs every host case on real,
//     poisoned device memory and checks that nothing changed and that the
//     context still computes; the device cases' tests use the messages
//     documented here.
// Only public headers: the table program links the shared library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "scatterptx/scatterptx.h"

namespace scatterptx_bad_inputs {

// The entry points a bad input is passed to.
enum class Entry {
  kScatterAdd,
  kDescribePlan,
  kPlanWorkspaceSize,
  kPlanCreate,
  kScatterAddGrouped,
  kPlanExecute,   // with a NULL plan: the host cannot make one
  kPlanDescribe,  // with a NULL plan
  kPlanDestroy,   // with a NULL plan
  kTakeIndexError,
  kSetAllocator,
  kScatterAddWithAllocator,  // with Call::allocator
  kStatusName,
  kDtypeSize,
  kDtypeName,
  kArgsInit,
  kGroupOptionsInit,
  kCppMakeArgs,   // scatterptx::make_args, C++
  kCppEmptyPlan,  // scatterptx::Plan{}.execute, C++
};
const char* entry_name(Entry entry);

// Everything an entry point is handed: a valid call, until a case spoils it.
struct Call {
  scatterptx_scatter_add_args args{};
  bool args_null = false;
  scatterptx_schedule schedule{};
  bool with_schedule = false;        // args.schedule = &schedule at the call
  scatterptx_group_options options{};
  bool options_null = false;
  void* workspace = nullptr;         // plan_create and scatter_add_grouped
  size_t workspace_bytes = 0;
  bool answer_null = false;          // the pointer an entry answers through (bytes, plan, position) is NULL
  bool buffer_null = false;          // describe's buffer
  size_t buffer_size = 1024;
  scatterptx_allocator allocator{};  // set_allocator's and scatter_add_with_allocator's
  int raw_value = 0;                 // status_name's status, dtype_size's and dtype_name's dtype
  int64_t cpp_src_cols = 64;         // make_args's src.cols
  CUstream stream = nullptr;
};

// The shape every case starts from: 1000 x 64 f32 out, 4096 x 64 f32 src,
// int64 index; valid for every path and mode.
constexpr int64_t kOutRows = 1000;
constexpr int64_t kSrcRows = 4096;
constexpr int64_t kCols = 64;

// The valid call on the given pointers (workspace: at least
// baseline_workspace_bytes(), 256-byte aligned).
Call baseline_call(void* out, const void* src, const void* index, void* workspace, size_t workspace_bytes);
// The same on fake pointers 1 TiB apart, which no entry point dereferences
// before refusing.
Call fake_baseline_call();
// The workspace a SEGMENTED plan of the baseline needs.
size_t baseline_workspace_bytes();

// What an entry point answered.
struct Outcome {
  bool returns_status = true;  // false: an entry that returns a value (or nothing)
  scatterptx_status status = SCATTERPTX_SUCCESS;
  std::string value;           // what a value-returning entry returned
  std::string message;         // scatterptx_last_error_message(), or the C++ exception's what()
  bool plan_left_null = true;  // plan_create: *plan was NULL afterwards
  // "SCATTERPTX_ERROR_INVALID_ARGUMENT", "returns 0", "throws scatterptx::Error(...)", ...
  std::string result(Entry entry) const;
};

Outcome run_entry(Entry entry, const Call& call);

// A bad input the library refuses (or treats as documented) before touching
// the driver: the generator runs it on the host.
struct HostCase {
  std::string id;                  // [a-z0-9_]: the row's anchor and the tests' parameter name
  std::string input;               // what is bad (markdown)
  std::vector<Entry> entries;
  std::function<void(Call&)> spoil;
  scatterptx_status status = SCATTERPTX_ERROR_INVALID_ARGUMENT;  // what each status entry returns
  std::string value;               // what each value entry returns
  std::vector<std::string> names;  // the message names one of them (case-insensitive); none: no check
};
const std::vector<HostCase>& host_cases();
// gtest prints parameters of failed tests: the id, not the bytes.
inline void PrintTo(const HostCase& c, std::ostream* os) { *os << c.id; }

// "" when outcome is what c documents for entry, else why not.
std::string outcome_mismatch(const HostCase& c, Entry entry, const Outcome& outcome);

// The tests that prove a host case: its host-only test and its GPU test.
std::string host_case_host_test(const HostCase& c);
std::string host_case_gpu_test(const HostCase& c);

// What the generator can check of a documented case where it runs.
enum class Verify {
  kNo,
  kWithoutDriver,    // without a driver every entry answers the documented status and message prefix
  kWithoutContext,   // with a driver and no current context: the documented status and message
};

// A bad input that reaches the device, the environment or the driver, or
// that the library cannot detect: documented here, proved by the tests named.
struct DocumentedCase {
  std::string id;
  std::string input;
  std::string entries;
  std::string result;             // the status, or what happens
  std::string message;            // the message, <placeholders> for what varies; "" for none
  std::vector<std::string> tests; // gtest names or patterns ('*'); none: no test can show it here
  Verify verify = Verify::kNo;
  std::string note;               // why there is no test, or what else holds
};
const std::vector<DocumentedCase>& device_cases();
const std::vector<DocumentedCase>& undetected_cases();
const DocumentedCase& device_case(const std::string& id);

// message with each <name> replaced by its value.
std::string expand(std::string message, const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace scatterptx_bad_inputs
