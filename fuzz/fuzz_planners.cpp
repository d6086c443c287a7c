// Fuzz target: well-formed problems (sizes from the shapes that matter and
// around their limits, aligned or offset pointers that do not overlap, a
// schedule or none, options) on varied sm_90+ devices, so that most inputs
// get past validation into the planners; every plan is checked with the
// address model.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "byte_reader.hpp"
#include "errors.hpp"
#include "fuzzed_device.hpp"
#include "plan_everything.hpp"
#include "problem.hpp"

namespace {

using namespace scatterptx::detail;
using namespace scatterptx::fuzz;

// A size near a value that matters, or any value below 2^40.
uint64_t read_size(ByteReader& in) {
  static constexpr uint64_t kNear[] = {0,       1,         4,          16,         64,        100,
                                       256,     4096,      4097,       65536,      1u << 20,  1720000,
                                       1u << 26, (1ull << 31) - 1, 1ull << 31, 1ull << 32, (1ull << 32) - 2, 1ull << 40};
  const uint8_t how = in.u8();
  if (how % 4 == 3) return in.u64() & ((uint64_t{1} << 40) - 1);
  const int64_t delta = static_cast<int8_t>(in.u8()) / 16;  // -8..7
  const uint64_t base = in.pick(kNear);
  return (delta < 0 && base < static_cast<uint64_t>(-delta)) ? 0 : base + delta;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  static constexpr scatterptx_dtype kDtypes[] = {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64};
  static constexpr scatterptx_path kPaths[] = {SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_RED,
                                               SCATTERPTX_PATH_PRIVATE};
  static constexpr scatterptx_grouping kGroupings[] = {SCATTERPTX_GROUPING_AUTO, SCATTERPTX_GROUPING_OFF,
                                                       SCATTERPTX_GROUPING_NO_FALLBACK};
  static constexpr scatterptx_mode kModes[] = {SCATTERPTX_MODE_AUTO, SCATTERPTX_MODE_STREAMING,
                                               SCATTERPTX_MODE_SEGMENTED};
  scatterptx_scatter_add_args a;
  scatterptx_scatter_add_args_init(&a);
  const uint8_t flags = in.u8();
  a.dtype = in.pick(kDtypes);
  a.index_type = (flags & 1) ? SCATTERPTX_INDEX_INT32 : SCATTERPTX_INDEX_INT64;
  a.index_check = (flags & 2) ? SCATTERPTX_INDEX_CHECKED : SCATTERPTX_INDEX_RECORD;
  a.path = in.pick(kPaths);
  a.grouping = in.pick(kGroupings);
  const uint64_t elem = scatterptx_dtype_size(a.dtype);
  a.cols = static_cast<int64_t>(read_size(in) & ((uint64_t{1} << 36) - 1));
  a.src_rows = static_cast<int64_t>(read_size(in));
  a.out_rows = static_cast<int64_t>(read_size(in));
  // Strides: cols, or padded to a 16-byte multiple, plus a few elements.
  const uint64_t padded = (a.cols * elem + 15) / 16 * 16 / elem;
  a.out_row_stride = static_cast<int64_t>(((flags & 4) ? padded : a.cols) + in.u8() % 4 * (flags & 8 ? 1 : 0));
  a.src_row_stride = static_cast<int64_t>(((flags & 16) ? padded : a.cols) + in.u8() % 4 * (flags & 32 ? 1 : 0));
  // Pointers: apart by their extents, each 256-aligned plus an offset in
  // whole elements (index entries for index).
  const uint64_t out_bytes = uint64_t(a.out_rows) * uint64_t(a.out_row_stride) * elem;
  const uint64_t src_bytes = uint64_t(a.src_rows) * uint64_t(a.src_row_stride) * elem;
  const uint64_t base = (uint64_t{1} << 40) + (uint64_t{in.u32()} << 8);
  const uint64_t out = base + in.u8() % 16 * elem;
  const uint64_t src = (out + out_bytes + 256) / 256 * 256 + in.u8() % 16 * elem;
  const uint64_t index = (src + src_bytes + 256) / 256 * 256 + in.u8() % 4 * 8;
  a.out = reinterpret_cast<void*>(static_cast<uintptr_t>(out));
  a.src = reinterpret_cast<const void*>(static_cast<uintptr_t>(src));
  a.index = reinterpret_cast<const void*>(static_cast<uintptr_t>(index));
  scatterptx_schedule schedule{in.u32() % 4097 / 16 * 16, in.u8() % 33u, in.u8() % 33u, in.u8() % 33u};
  if (flags & 64) a.schedule = &schedule;
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  options.mode = in.pick(kModes);
  options.deterministic = in.u8() % 2;
  options.warps_per_cta = in.u8() % 33;
  const DeviceLimits device = read_device(in);
  // The reduce and the weights, last: inputs that end before them (the seeds
  // written before they existed) read as a plain sum.
  static constexpr scatterptx_reduce kReduces[] = {SCATTERPTX_REDUCE_SUM, SCATTERPTX_REDUCE_MEAN,
                                                   SCATTERPTX_REDUCE_AMAX, SCATTERPTX_REDUCE_AMIN};
  a.reduce = in.pick(kReduces);
  const uint8_t reduce_flags = in.u8();
  a.include_self = (reduce_flags & 1) ? 0 : 1;
  if (reduce_flags & 2) {
    // Weights after index, 256-aligned plus an offset in weight elements (or
    // a stray byte, which validation refuses).
    a.weights_dtype = (reduce_flags & 4) ? a.dtype : SCATTERPTX_F32;
    const uint64_t weight_bytes = a.weights_dtype == SCATTERPTX_F32 ? 4 : elem;
    const uint64_t index_bytes = uint64_t(a.src_rows) * (a.index_type == SCATTERPTX_INDEX_INT32 ? 4 : 8);
    const uint64_t weights =
        (index + index_bytes + 256) / 256 * 256 + in.u8() % 4 * weight_bytes + ((reduce_flags & 8) ? 1 : 0);
    a.weights = reinterpret_cast<const void*>(static_cast<uintptr_t>(weights));
  }

  // FUZZ_VERBOSE=1: say why an input stops at validation (seeds' debugging).
  static const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;
  try {
    const Problem problem = validate_arguments(&a);
    if (verbose) std::fprintf(stderr, "valid: src_rows=%llu out_rows=%llu cols=%llu\n",
                              (unsigned long long)problem.src_rows, (unsigned long long)problem.out_rows,
                              (unsigned long long)problem.cols);
    plan_everything(problem, device, (flags & 128) ? &options : nullptr, uint64_t{1} << 47);
  } catch (const Failure& failure) {
    if (verbose) std::fprintf(stderr, "refused: %s\n", failure.what());
    require_clear_failure("validate_arguments", failure.status(), failure.what());
  }
  return 0;
}
