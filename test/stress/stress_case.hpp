// One stress call, drawn at random from the run's seed and its call number
// alone (a pure function, so any failing call can be replayed by itself):
// what kind of call, in which context, on what shape, and what must happen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scatterptx/scatterptx.h"

namespace scatterptx_stress {

enum class CallKind {
  kDefault,     // scatterptx_scatter_add, path AUTO, grouping AUTO
  kForcedPath,  // scatterptx_scatter_add, path TMA / RED / PRIVATE, grouping OFF
  kGrouped,     // scatterptx_scatter_add_grouped in a caller workspace
  kPlan,        // plan_create, execute (on two streams), destroy
  kGraph,       // one of the above captured in a CUDA graph and replayed
};
constexpr int kCallKinds = 5;
const char* call_kind_name(CallKind kind);

// What a graph case captures.
enum class CapturedCall { kDefault, kGrouped, kPlanExecute };
const char* captured_call_name(CapturedCall call);

enum class IndexPattern { kUniform, kSorted, kHot };
const char* index_pattern_name(IndexPattern pattern);

struct StressShape {
  scatterptx_dtype dtype = SCATTERPTX_F32;
  scatterptx_index_type index_type = SCATTERPTX_INDEX_INT64;
  int64_t out_rows = 0;
  int64_t src_rows = 0;
  int64_t cols = 0;
  int64_t out_row_stride = 0;     // elements, >= cols
  int64_t src_row_stride = 0;     // elements, >= cols
  size_t src_offset_bytes = 0;    // src starts this far into its allocation
  size_t index_offset_bytes = 0;  // index starts this far into its allocation

  bool empty() const { return src_rows == 0 || cols == 0; }
  size_t element_bytes() const;
  // Whether a forced TMA path may take it: 16-byte rows, strides and
  // pointers (out sits after guard rows of its own row size, allocations
  // are 256-byte aligned).
  bool tma_eligible() const;
};

struct StressCase {
  uint64_t call = 0;         // the call number in the run
  uint64_t input_seed = 0;   // of out0, src and index
  CallKind kind = CallKind::kDefault;
  int context = 0;           // 0: the primary context, 1: the one made with cuCtxCreate
  StressShape shape;
  IndexPattern pattern = IndexPattern::kUniform;
  scatterptx_path path = SCATTERPTX_PATH_AUTO;  // forced for kForcedPath
  bool must_refuse = false;  // a forced TMA path on an ineligible layout
  bool may_refuse = false;   // a forced PRIVATE path whose accumulators may not fit
  scatterptx_group_options options{};  // kGrouped, kPlan, and graphs of them
  bool plan_own_workspace = false;     // kPlan: the plan allocates its workspace
  int plan_executes = 1;               // kPlan: executes into out, chained over two streams
  bool twin = false;                   // run once more into a second out (plans, deterministic)
  CapturedCall captured = CapturedCall::kDefault;  // kGraph
  std::vector<int64_t> bad_positions;  // source positions given an out-of-range index
  scatterptx_index_check check = SCATTERPTX_INDEX_RECORD;
  bool take_after = false;             // the calling thread takes the index-error record after

  std::string describe() const;
};

// Every kGraphPeriod-th call (from kGraphOffset) is a graph case; the rest
// are the other kinds at fixed odds. 200 calls hold one graph, 1000 four.
constexpr uint64_t kGraphPeriod = 250;
constexpr uint64_t kGraphOffset = 100;

// Call `call` of the run with seed run_seed.
StressCase make_case(uint64_t run_seed, uint64_t call);
// The same draw with the kind and the context fixed (the warm-up's cases).
StressCase make_case_of_kind(uint64_t run_seed, uint64_t call, CallKind kind, int context);

// The warm-up's calls are numbered from kWarmupFirstCall: call
// kWarmupFirstCall + 8 * j + role is a case of the role's kind (a
// WarmupRole), in context j % 2. case_for_call maps both ranges.
constexpr uint64_t kWarmupFirstCall = uint64_t{1} << 40;
enum class WarmupRole { kDefault, kForcedPath, kGrouped, kPlan, kGraph };
uint64_t warmup_call(uint64_t j, WarmupRole role);
// make_case for a main call, the role's case for a warm-up call.
StressCase case_for_call(uint64_t run_seed, uint64_t call);

// Whether a forced PRIVATE path must, may or will not refuse shape (the
// estimate test/scatter_case.cpp's DeviceScatter::refusal makes).
enum class Refusal { kNever, kMay, kMust };
Refusal private_path_refusal(const StressShape& shape);

// Caps on what make_case draws, so a call's host work stays small.
constexpr int64_t kMaxGroupRegionRows = 80000;
constexpr int64_t kMaxGroupRegionRowBytes = 512;
constexpr int64_t kMaxOtherElements = int64_t{1} << 22;

}  // namespace scatterptx_stress
