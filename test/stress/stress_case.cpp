#include "stress_case.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "reference.hpp"

namespace scatterptx_stress {
namespace {

using scatterptx_test::derive_seed;
using scatterptx_test::Rng;

// Sizes by region of the planners: tiny, small rows of any width, few
// targets (the privatised path's), and grouping's (>= 65536 rows of >= 256
// bytes into an out beyond 16 MiB or onto hot targets).
enum class ShapeClass { kTiny, kSmall, kFewTargets, kGroupRegion };

constexpr int64_t kGroupRegionMinRows = int64_t{1} << 16;
constexpr int64_t kL2ResidentOutBytes = int64_t{16} << 20;

int64_t between(Rng& rng, int64_t low, int64_t high) { return low + rng.below(high - low + 1); }
bool chance(Rng& rng, double p) { return rng.uniform() < p; }

// Picks the index of weights by their share.
int pick(Rng& rng, std::initializer_list<int> weights) {
  int total = 0;
  for (int w : weights) total += w;
  int draw = static_cast<int>(rng.below(total));
  int at = 0;
  for (int w : weights) {
    if (draw < w) return at;
    draw -= w;
    ++at;
  }
  return at - 1;
}

// Elements per 16 bytes: the step a 16-byte aligned width or padding takes.
int64_t vector_elements(scatterptx_dtype dtype) {
  return 16 / static_cast<int64_t>(scatterptx_testing::element_bytes(dtype));
}

int64_t round_up(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

// aligned16: rows, strides and src 16-byte aligned (forced TMA and PRIVATE).
// hot_allowed: the group region may be reached through hot targets instead
// of an out beyond L2.
StressShape draw_shape(Rng& rng, ShapeClass shape_class, bool aligned16, bool hot_allowed) {
  StressShape s;
  s.dtype = static_cast<scatterptx_dtype>(rng.below(4));
  s.index_type = chance(rng, 0.5) ? SCATTERPTX_INDEX_INT32 : SCATTERPTX_INDEX_INT64;
  const int64_t element = static_cast<int64_t>(s.element_bytes());
  switch (shape_class) {
    case ShapeClass::kTiny:
      s.src_rows = between(rng, 1, 64);
      s.out_rows = between(rng, 1, 64);
      s.cols = between(rng, 1, 48);
      break;
    case ShapeClass::kSmall:
      s.src_rows = between(rng, 64, 20000);
      s.out_rows = between(rng, 1, 20000);
      s.cols = between(rng, 1, 300);
      break;
    case ShapeClass::kFewTargets:
      s.src_rows = between(rng, 2048, 40000);
      s.out_rows = between(rng, 1, 64);
      s.cols = std::max<int64_t>(1, 16 * between(rng, 1, 64) / element);
      break;
    case ShapeClass::kGroupRegion: {
      s.src_rows = between(rng, kGroupRegionMinRows, kMaxGroupRegionRows);
      const int64_t row_bytes = chance(rng, 0.5) ? 256 : kMaxGroupRegionRowBytes;
      s.cols = row_bytes / element;
      if (hot_allowed && chance(rng, 0.4)) {
        s.out_rows = between(rng, 64, s.src_rows / 65);  // > 64 rows per target
      } else {
        s.out_rows = kL2ResidentOutBytes / row_bytes * between(rng, 105, 150) / 100;
      }
      if (!aligned16 && chance(rng, 0.1)) s.cols += 1;  // unaligned: the default call streams
      break;
    }
  }
  const int64_t step = aligned16 ? vector_elements(s.dtype) : 1;
  if (aligned16) s.cols = round_up(s.cols, step);
  if (shape_class != ShapeClass::kGroupRegion && s.src_rows * s.cols > kMaxOtherElements) {
    s.src_rows = std::max<int64_t>(1, kMaxOtherElements / s.cols);
  }
  const auto padding = [&] { return chance(rng, 0.35) ? step * between(rng, 1, 17) : 0; };
  s.out_row_stride = s.cols + padding();
  s.src_row_stride = s.cols + padding();
  if (aligned16) {
    s.src_offset_bytes = chance(rng, 0.2) ? 16 * static_cast<size_t>(between(rng, 1, 3)) : 0;
  } else {
    s.src_offset_bytes = chance(rng, 0.2) ? static_cast<size_t>(element * between(rng, 1, 3)) : 0;
  }
  const int64_t index_bytes = s.index_type == SCATTERPTX_INDEX_INT32 ? 4 : 8;
  s.index_offset_bytes = chance(rng, 0.2) ? static_cast<size_t>(index_bytes * between(rng, 1, 3)) : 0;
  return s;
}

// A no-op problem, which every entry point must accept and leave out alone.
void make_empty(Rng& rng, StressShape* s) {
  if (chance(rng, 0.4)) {
    s->src_rows = 0;
  } else {
    s->cols = 0;
    s->out_row_stride = between(rng, 1, 8);
    s->src_row_stride = between(rng, 1, 8);
  }
}

IndexPattern draw_pattern(Rng& rng, bool hot_allowed) {
  const int p = pick(rng, {70, 15, hot_allowed ? 15 : 0});
  return static_cast<IndexPattern>(p);
}

scatterptx_group_options draw_group_options(Rng& rng, bool streaming_allowed) {
  scatterptx_group_options o{};
  switch (pick(rng, {35, 30, 25, streaming_allowed ? 10 : 0})) {
    case 0: o.mode = SCATTERPTX_MODE_SEGMENTED; break;
    case 1: o.mode = SCATTERPTX_MODE_AUTO; o.deterministic = 1; break;
    case 2: o.mode = SCATTERPTX_MODE_AUTO; break;
    default: o.mode = SCATTERPTX_MODE_STREAMING; break;
  }
  o.warps_per_cta = chance(rng, 0.3) ? static_cast<uint32_t>(between(rng, 1, 32)) : 0;
  return o;
}

ShapeClass draw_class(Rng& rng, std::initializer_list<int> tiny_small_few_group) {
  return static_cast<ShapeClass>(pick(rng, tiny_small_few_group));
}

void draw_forced_path(Rng& rng, StressCase* c) {
  switch (pick(rng, {40, 35, 25})) {
    case 0: {
      c->path = SCATTERPTX_PATH_TMA;
      const bool ineligible = chance(rng, 0.1);
      c->shape = draw_shape(rng, draw_class(rng, {15, 50, 25, 10}), !ineligible, false);
      if (ineligible) {
        // An odd width or a src one element off 16 bytes: TMA must refuse.
        if (chance(rng, 0.5) || c->shape.element_bytes() == 8) {
          c->shape.src_offset_bytes = c->shape.element_bytes();
        } else {
          c->shape.cols += 1;
          c->shape.out_row_stride = std::max(c->shape.out_row_stride, c->shape.cols);
          c->shape.src_row_stride = std::max(c->shape.src_row_stride, c->shape.cols);
        }
      }
      c->must_refuse = !c->shape.empty() && !c->shape.tma_eligible();
      break;
    }
    case 1:
      c->path = SCATTERPTX_PATH_RED;
      c->shape = draw_shape(rng, draw_class(rng, {20, 60, 15, 5}), false, false);
      break;
    default: {
      c->path = SCATTERPTX_PATH_PRIVATE;
      c->shape = draw_shape(rng, draw_class(rng, {10, 20, 70, 0}), true, false);
      c->shape.out_rows = std::min<int64_t>(c->shape.out_rows, 4096);
      const Refusal refusal = private_path_refusal(c->shape);
      c->must_refuse = refusal == Refusal::kMust;
      c->may_refuse = refusal == Refusal::kMay;
      break;
    }
  }
}

std::vector<int64_t> draw_bad_positions(Rng& rng, int64_t src_rows) {
  std::set<int64_t> positions;
  const int64_t count = std::min<int64_t>(src_rows, between(rng, 1, 3));
  while (static_cast<int64_t>(positions.size()) < count) positions.insert(rng.below(src_rows));
  return {positions.begin(), positions.end()};
}

StressCase draw_case(uint64_t run_seed, uint64_t call, const CallKind* fixed_kind, const int* fixed_context) {
  Rng rng(derive_seed(run_seed, call));
  StressCase c;
  c.call = call;
  c.input_seed = derive_seed(derive_seed(run_seed, call), 1);
  c.kind = call % kGraphPeriod == kGraphOffset ? CallKind::kGraph
                                               : static_cast<CallKind>(pick(rng, {30, 25, 20, 25}));
  c.context = static_cast<int>(rng.below(2));
  if (fixed_kind != nullptr) c.kind = *fixed_kind;
  if (fixed_context != nullptr) c.context = *fixed_context;

  switch (c.kind) {
    case CallKind::kDefault:
      c.shape = draw_shape(rng, draw_class(rng, {15, 40, 15, 30}), false, true);
      c.pattern = draw_pattern(rng, true);
      break;
    case CallKind::kForcedPath:
      draw_forced_path(rng, &c);
      c.pattern = draw_pattern(rng, true);
      break;
    case CallKind::kGrouped:
    case CallKind::kPlan:
      c.shape = draw_shape(rng, draw_class(rng, {10, 50, 10, 30}), false, true);
      c.pattern = draw_pattern(rng, true);
      c.options = draw_group_options(rng, true);
      c.twin = c.kind == CallKind::kPlan || c.options.deterministic != 0;
      c.plan_own_workspace = c.kind == CallKind::kPlan && chance(rng, 0.5);
      c.plan_executes = c.kind == CallKind::kPlan ? static_cast<int>(between(rng, 1, 2)) : 1;
      break;
    case CallKind::kGraph:
      // No hot targets and at most a quarter as many out rows as source
      // rows: a thousand replays stay far inside f16's range.
      c.shape = draw_shape(rng, draw_class(rng, {0, 60, 0, 40}), false, false);
      c.shape.out_rows = std::max(c.shape.out_rows, (c.shape.src_rows + 3) / 4);
      c.pattern = draw_pattern(rng, false);
      // In turn, so that the four graphs of a thousand calls capture all three.
      c.captured = static_cast<CapturedCall>(call / kGraphPeriod % 3);
      c.options = draw_group_options(rng, true);
      break;
  }

  const bool nonempty_draw = c.kind != CallKind::kGraph && !c.must_refuse && !c.may_refuse;
  if (nonempty_draw && chance(rng, 0.03)) make_empty(rng, &c.shape);
  if (c.kind == CallKind::kGraph || c.must_refuse || c.may_refuse || c.shape.empty()) return c;
  // CHECKED plans are left out: their create fails or each execute checks,
  // by mode, which the planner settles on the device.
  const bool checked_allowed = c.kind != CallKind::kPlan;
  if (chance(rng, 0.15)) {
    c.bad_positions = draw_bad_positions(rng, c.shape.src_rows);
    c.check = checked_allowed && chance(rng, 0.3) ? SCATTERPTX_INDEX_CHECKED : SCATTERPTX_INDEX_RECORD;
    c.take_after = c.check == SCATTERPTX_INDEX_RECORD && chance(rng, 0.5);
  } else if (checked_allowed && chance(rng, 0.05)) {
    c.check = SCATTERPTX_INDEX_CHECKED;
  }
  return c;
}

}  // namespace

const char* call_kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::kDefault: return "default";
    case CallKind::kForcedPath: return "forced";
    case CallKind::kGrouped: return "grouped";
    case CallKind::kPlan: return "plan";
    case CallKind::kGraph: return "graph";
  }
  return "unknown";
}

const char* captured_call_name(CapturedCall call) {
  switch (call) {
    case CapturedCall::kDefault: return "default call";
    case CapturedCall::kGrouped: return "scatter_add_grouped";
    case CapturedCall::kPlanExecute: return "plan_execute";
  }
  return "unknown";
}

const char* index_pattern_name(IndexPattern pattern) {
  switch (pattern) {
    case IndexPattern::kUniform: return "uniform";
    case IndexPattern::kSorted: return "sorted";
    case IndexPattern::kHot: return "hot";
  }
  return "unknown";
}

size_t StressShape::element_bytes() const { return scatterptx_testing::element_bytes(dtype); }

bool StressShape::tma_eligible() const {
  const uint64_t element = element_bytes();
  const auto aligned16 = [](uint64_t value) { return value % 16 == 0; };
  return aligned16(static_cast<uint64_t>(cols) * element) &&
         aligned16(static_cast<uint64_t>(out_row_stride) * element) &&
         aligned16(static_cast<uint64_t>(src_row_stride) * element) && aligned16(src_offset_bytes);
}

Refusal private_path_refusal(const StressShape& s) {
  if (s.empty()) return Refusal::kNever;
  if (!s.tma_eligible() || s.out_rows > 4096) return Refusal::kMust;
  const uint64_t element = s.element_bytes();
  const uint64_t accumulator = s.dtype == SCATTERPTX_F64 ? 8 : 4;
  const uint64_t staging = element == 2 ? 2 : 0;
  const uint64_t width = std::min<uint64_t>(static_cast<uint64_t>(s.cols), 64);
  const uint64_t bytes = static_cast<uint64_t>(s.out_rows) * (width * (accumulator + staging) + 4) +
                         48 * width * element + 1024;
  return bytes < 200 * 1024 ? Refusal::kNever : Refusal::kMay;
}

StressCase make_case(uint64_t run_seed, uint64_t call) { return draw_case(run_seed, call, nullptr, nullptr); }

StressCase make_case_of_kind(uint64_t run_seed, uint64_t call, CallKind kind, int context) {
  return draw_case(run_seed, call, &kind, &context);
}

uint64_t warmup_call(uint64_t j, WarmupRole role) { return kWarmupFirstCall + 8 * j + static_cast<uint64_t>(role); }

StressCase case_for_call(uint64_t run_seed, uint64_t call) {
  if (call < kWarmupFirstCall) return make_case(run_seed, call);
  const uint64_t j = (call - kWarmupFirstCall) / 8;
  const auto role = static_cast<WarmupRole>((call - kWarmupFirstCall) % 8);
  const int context = static_cast<int>(j % 2);
  switch (role) {
    case WarmupRole::kDefault: return make_case_of_kind(run_seed, call, CallKind::kDefault, context);
    case WarmupRole::kForcedPath: return make_case_of_kind(run_seed, call, CallKind::kForcedPath, context);
    case WarmupRole::kGrouped: return make_case_of_kind(run_seed, call, CallKind::kGrouped, context);
    case WarmupRole::kPlan: return make_case_of_kind(run_seed, call, CallKind::kPlan, context);
    default: return make_case_of_kind(run_seed, call, CallKind::kGraph, context);
  }
}

std::string StressCase::describe() const {
  std::ostringstream text;
  const StressShape& s = shape;
  text << "call " << call << " " << call_kind_name(kind);
  if (kind == CallKind::kForcedPath) text << " path " << scatterptx_test::path_name(path);
  if (kind == CallKind::kGraph) text << " of " << captured_call_name(captured);
  text << " in context " << context << ": " << scatterptx_dtype_name(s.dtype) << " "
       << scatterptx_test::index_type_name(s.index_type) << " out " << s.out_rows << "x" << s.cols << " (stride "
       << s.out_row_stride << "), src " << s.src_rows << "x" << s.cols << " (stride " << s.src_row_stride
       << ", offset " << s.src_offset_bytes << " B), index offset " << s.index_offset_bytes << " B, "
       << index_pattern_name(pattern) << " index";
  const bool grouped_api = kind == CallKind::kGrouped || kind == CallKind::kPlan ||
                           (kind == CallKind::kGraph && captured != CapturedCall::kDefault);
  if (grouped_api) {
    text << ", mode " << (options.mode == SCATTERPTX_MODE_SEGMENTED   ? "segmented"
                          : options.mode == SCATTERPTX_MODE_STREAMING ? "streaming"
                                                                      : "auto")
         << (options.deterministic ? " deterministic" : "") << " warps " << options.warps_per_cta;
  }
  if (kind == CallKind::kPlan) {
    text << ", " << (plan_own_workspace ? "own" : "caller") << " workspace, " << plan_executes << " execute(s)";
  }
  if (twin) text << ", twin out";
  if (must_refuse) text << ", must be refused";
  if (may_refuse) text << ", may be refused";
  if (!bad_positions.empty()) {
    text << ", bad index at";
    for (int64_t p : bad_positions) text << " " << p;
  }
  text << (check == SCATTERPTX_INDEX_CHECKED ? ", CHECKED" : ", RECORD");
  if (take_after) text << " then take";
  return text.str();
}

}  // namespace scatterptx_stress
