// Prints the streaming and grouped plans of a fixed grid of problems on an
// H200-like device, one line per (problem, path): a refactor of the planners
// that must not change a plan diffs this output before and after.
#include <cstdint>
#include <cstdio>
#include <string>

#include "errors.hpp"
#include "group_plan.hpp"
#include "plan.hpp"

namespace {

using namespace scatterptx::detail;

// Its red variants' resident CTAs per SM are the driver's figures for their
// registers: 3 for 16-byte lanes and for 8-byte lanes with 64-bit indices, 4
// for the others (host/plan_red.cpp, red_ctas_per_sm).
DeviceLimits h200() {
  DeviceLimits device;
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const KernelVariant& v = kKernelVariants[i];
    if (v.family != KernelFamily::row_red) continue;
    const bool wide = v.vector_bytes == 16 || (v.vector_bytes == 8 && v.index_type == SCATTERPTX_INDEX_INT64);
    device.resident_ctas_per_sm[i] = wide ? 3 : 4;
  }
  return device;
}

constexpr scatterptx_dtype kDtypes[] = {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64};
constexpr uint64_t kCols[] = {1,   2,    3,    4,    5,    8,     12,    16,    24,     32,
                              33,  48,   64,   100,  127,  128,   256,   257,   384,    512,
                              1000, 1024, 2047, 2048, 4096, 8192, 16000, 65536, 640001, uint64_t{1} << 20};
constexpr uint64_t kSrcRows[] = {0, 1, 100, 65536, 4000000, (uint64_t{1} << 31) + 5};
constexpr uint64_t kOutRows[] = {1, 100, 4096, 65536, 1000000, 1720000, uint64_t{1} << 26};
constexpr scatterptx_index_type kIndexTypes[] = {SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64};
constexpr scatterptx_path kPaths[] = {SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_RED, SCATTERPTX_PATH_TMA,
                                      SCATTERPTX_PATH_PRIVATE};

const char* path_name(scatterptx_path path) {
  switch (path) {
    case SCATTERPTX_PATH_RED: return "red";
    case SCATTERPTX_PATH_TMA: return "tma";
    case SCATTERPTX_PATH_PRIVATE: return "private";
    default: return "auto";
  }
}

// aligned: 16-byte aligned pointers, row strides rounded up to 16 bytes.
// Otherwise pointers 4 bytes past 16-byte alignment (8 for f64, its element
// size) and contiguous rows.
Problem problem(scatterptx_dtype dtype, uint64_t cols, uint64_t src_rows, uint64_t out_rows,
                scatterptx_index_type index_type, bool aligned, scatterptx_path path) {
  Problem p;
  p.dtype = dtype;
  p.elem_bytes = scatterptx_dtype_size(dtype);
  p.index_type = index_type;
  p.index_bytes = index_type == SCATTERPTX_INDEX_INT32 ? 4 : 8;
  p.path = path;
  p.src_rows = src_rows;
  p.out_rows = out_rows;
  p.cols = cols;
  const uint64_t row_bytes = cols * p.elem_bytes;
  const uint64_t stride = aligned ? (row_bytes + 15) / 16 * 16 : row_bytes;
  const uint64_t offset = aligned ? 0 : p.elem_bytes == 8 ? 8 : 4;
  p.out_row_stride_bytes = stride;
  p.src_row_stride_bytes = stride;
  p.out_address = 0x7f0000000000 + offset;
  p.src_address = 0x7f1000000000 + offset;
  p.index_address = 0x7f2000000000;
  return p;
}

std::string failure_text(const Failure& failure) {
  return std::string("error ") + scatterptx_status_name(failure.status()) + ": " + failure.what();
}

std::string streaming_plan(const Problem& p, const DeviceLimits& device) {
  try {
    return make_plan(p, device).describe();
  } catch (const Failure& failure) {
    return failure_text(failure);
  }
}

std::string group_plan(const Problem& p, scatterptx_mode mode, bool deterministic) {
  scatterptx_group_options options{};
  options.mode = mode;
  options.deterministic = deterministic ? 1 : 0;
  try {
    return make_group_plan(p, validate_group_options(&options, p)).describe();
  } catch (const Failure& failure) {
    return failure_text(failure);
  }
}

}  // namespace

int main() {
  const DeviceLimits device = h200();
  uint64_t lines = 0;
  for (scatterptx_dtype dtype : kDtypes) {
    for (uint64_t cols : kCols) {
      for (uint64_t src_rows : kSrcRows) {
        for (uint64_t out_rows : kOutRows) {
          for (scatterptx_index_type index_type : kIndexTypes) {
            for (bool aligned : {true, false}) {
              for (scatterptx_path path : kPaths) {
                const Problem p = problem(dtype, cols, src_rows, out_rows, index_type, aligned, path);
                std::printf("%s cols=%llu src_rows=%llu out_rows=%llu %s %s path=%s | %s | group auto: %s | "
                            "segmented: %s | streaming: %s | deterministic: %s\n",
                            scatterptx_dtype_name(dtype), static_cast<unsigned long long>(cols),
                            static_cast<unsigned long long>(src_rows), static_cast<unsigned long long>(out_rows),
                            index_type == SCATTERPTX_INDEX_INT32 ? "i32" : "i64", aligned ? "aligned" : "offset",
                            path_name(path), streaming_plan(p, device).c_str(),
                            group_plan(p, SCATTERPTX_MODE_AUTO, false).c_str(),
                            group_plan(p, SCATTERPTX_MODE_SEGMENTED, false).c_str(),
                            group_plan(p, SCATTERPTX_MODE_STREAMING, false).c_str(),
                            group_plan(p, SCATTERPTX_MODE_AUTO, true).c_str());
                ++lines;
              }
            }
          }
        }
      }
    }
  }
  std::fprintf(stderr, "%llu problems\n", static_cast<unsigned long long>(lines));
  return 0;
}
