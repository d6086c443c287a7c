#include "scatter_case.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "plan.hpp"

namespace scatterptx_test {

std::string ScatterShape::describe() const {
  std::ostringstream text;
  text << dtype_name(dtype) << " " << index_type_name(index_type) << " out " << out_rows << "x"
       << cols << " (stride " << out_stride() << "), src " << src_rows << "x" << cols
       << " (stride " << src_stride() << ", offset " << src_offset_bytes << " bytes), index offset "
       << index_offset_bytes << " bytes";
  return text.str();
}

HostScatter make_random_scatter(const ScatterShape& shape, uint64_t seed) {
  HostScatter host;
  host.out0 = random_matrix(shape.dtype, shape.out_rows, shape.cols, shape.out_stride(),
                            kOutPaddingByte, derive_seed(seed, 1));
  host.src = random_matrix(shape.dtype, shape.src_rows, shape.cols, shape.src_stride(),
                           kSrcPaddingByte, derive_seed(seed, 2));
  host.index = shape.out_rows > 0 ? random_indices(shape.src_rows, shape.out_rows,
                                                   derive_seed(seed, 3))
                                  : std::vector<int64_t>(static_cast<size_t>(shape.src_rows), 0);
  return host;
}

bool make_sums_exact(HostScatter& host, uint64_t seed, int repeats) {
  std::vector<int64_t> rows_per_target(static_cast<size_t>(host.out0.rows), 0);
  for (int64_t target : host.index) {
    if (target >= 0 && target < host.out0.rows) ++rows_per_target[static_cast<size_t>(target)];
  }
  const int64_t most_rows =
      rows_per_target.empty() ? 0 : *std::max_element(rows_per_target.begin(), rows_per_target.end());
  // out0's value is one more term of each sum.
  const int64_t most_eighths = most_exact_eighths(host.out0.dtype, most_rows * repeats + 1);
  if (most_eighths < 1) return false;
  fill_eighths(host.out0, most_eighths, derive_seed(seed, 1));
  fill_eighths(host.src, most_eighths, derive_seed(seed, 2));
  return true;
}

const char* comparison_name(Comparison comparison) {
  switch (comparison) {
    case Comparison::kExact: return "exact sums";
    case Comparison::kOnChipSums: return "within the bound of on-chip sums";
    default: return "within the rounding bound";
  }
}

DeviceScatter::DeviceScatter(const ScatterShape& shape, const HostScatter& host)
    : shape_(shape),
      index_type_(shape.index_type),
      out_bytes_(host.out0.bytes.size()),
      guard_bytes_(static_cast<size_t>(kGuardRows) * host.out0.row_bytes()) {
  out_storage_ = DeviceBuffer(guard_bytes_ + out_bytes_ + guard_bytes_);
  fill_device_bytes(out_storage_.address(), kGuardByte, out_storage_.size());
  reset_out(host.out0);
  src_storage_ = DeviceBuffer(shape.src_offset_bytes + host.src.bytes.size());
  upload(src_storage_.address(shape.src_offset_bytes), host.src.bytes.data(),
         host.src.bytes.size());
  set_index(host.index, shape.index_type);
}

void DeviceScatter::reset_out(const HostMatrix& out0) {
  upload(out_storage_.address(guard_bytes_), out0.bytes.data(), out0.bytes.size());
}

void DeviceScatter::set_index(const std::vector<int64_t>& index, scatterptx_index_type type) {
  const std::vector<unsigned char> bytes = encode_indices(index, type);
  index_storage_ = DeviceBuffer(shape_.index_offset_bytes + bytes.size());
  upload(index_storage_.address(shape_.index_offset_bytes), bytes.data(), bytes.size());
  index_type_ = type;
}

scatterptx_scatter_add_args DeviceScatter::args(scatterptx_path path,
                                                scatterptx_index_check check) const {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = out_storage_.pointer(guard_bytes_);
  args.out_rows = shape_.out_rows;
  args.out_row_stride = shape_.out_stride();
  args.src = src_storage_.pointer(shape_.src_offset_bytes);
  args.src_rows = shape_.src_rows;
  args.src_row_stride = shape_.src_stride();
  args.cols = shape_.cols;
  args.dtype = shape_.dtype;
  args.index = index_storage_.pointer(shape_.index_offset_bytes);
  args.index_type = index_type_;
  args.index_check = check;
  args.path = path;
  return args;
}

bool DeviceScatter::tma_eligible() const {
  const size_t element = element_bytes(shape_.dtype);
  const auto aligned16 = [](uint64_t value) { return value % 16 == 0; };
  return aligned16(static_cast<uint64_t>(shape_.cols) * element) &&
         aligned16(static_cast<uint64_t>(shape_.out_stride()) * element) &&
         aligned16(static_cast<uint64_t>(shape_.src_stride()) * element) &&
         aligned16(out_storage_.address(guard_bytes_)) &&
         aligned16(src_storage_.address(shape_.src_offset_bytes));
}

DeviceScatter::Refusal DeviceScatter::refusal(scatterptx_path path) const {
  if (shape_.src_rows == 0 || shape_.cols == 0) return Refusal::kNever;
  if (path == SCATTERPTX_PATH_TMA) return tma_eligible() ? Refusal::kNever : Refusal::kMust;
  if (path != SCATTERPTX_PATH_PRIVATE) return Refusal::kNever;
  if (!tma_eligible() || shape_.out_rows > 4096) return Refusal::kMust;
  // Accumulators of the narrowest slice the path accepts (64 columns, or the
  // whole row), plus the bf16/f16 staging copy and six stages of eight rows.
  const uint64_t element = element_bytes(shape_.dtype);
  const uint64_t accumulator = shape_.dtype == SCATTERPTX_F64 ? 8 : 4;
  const uint64_t staging = element == 2 ? 2 : 0;
  const uint64_t width = std::min<uint64_t>(static_cast<uint64_t>(shape_.cols), 64);
  const uint64_t bytes = static_cast<uint64_t>(shape_.out_rows) * (width * (accumulator + staging) + 4) +
                         48 * width * element + 1024;
  return bytes < 200 * 1024 ? Refusal::kNever : Refusal::kMay;
}

HostMatrix DeviceScatter::download_out() const {
  HostMatrix got(shape_.dtype, shape_.out_rows, shape_.cols, shape_.out_stride(), 0);
  download(got.bytes.data(), out_storage_.address(guard_bytes_), got.bytes.size());
  return got;
}

std::string DeviceScatter::guard_damage() const {
  std::vector<unsigned char> before(guard_bytes_);
  std::vector<unsigned char> after(guard_bytes_);
  download(before.data(), out_storage_.address(), guard_bytes_);
  download(after.data(), out_storage_.address(guard_bytes_ + out_bytes_), guard_bytes_);
  const auto first_damage = [](const std::vector<unsigned char>& guard) {
    return std::find_if(guard.begin(), guard.end(),
                        [](unsigned char byte) { return byte != kGuardByte; }) -
           guard.begin();
  };
  const auto bad_before = static_cast<size_t>(first_damage(before));
  if (bad_before != guard_bytes_) {
    return "guard before out changed at byte " + std::to_string(bad_before) + " of " +
           std::to_string(guard_bytes_);
  }
  const auto bad_after = static_cast<size_t>(first_damage(after));
  if (bad_after != guard_bytes_) {
    return "guard after out changed at byte " + std::to_string(bad_after) + " of " +
           std::to_string(guard_bytes_);
  }
  return "";
}

std::string describe_plan(const scatterptx_scatter_add_args& args) {
  char buffer[1024] = {};
  const scatterptx_status status = scatterptx_describe_plan(&args, buffer, sizeof buffer);
  if (status != SCATTERPTX_SUCCESS) {
    return std::string("(describe_plan failed: ") + scatterptx_status_name(status) + ": " +
           scatterptx_last_error_message() + ")";
  }
  return buffer;
}

namespace {

constexpr int64_t kRedThreadsPerCta = scatterptx::detail::kRedThreadsPerCta;
constexpr int64_t kRowsPerBatch = 4;  // ROWS_IN_FLIGHT in gen/red_snippets.py

// A plan's groups of lanes: CTAs along the rows times the groups in a CTA.
int64_t groups_of_lanes(int64_t grid_x, int64_t lanes_per_row) {
  return grid_x * (kRedThreadsPerCta / lanes_per_row);
}

}  // namespace

int64_t plan_number(const std::string& plan, const std::string& key) {
  const size_t at = plan.find(" " + key + "=");
  if (at == std::string::npos) return -1;
  return std::stoll(plan.substr(at + key.size() + 2));
}

int64_t red_lane_bytes(scatterptx_dtype dtype) { return dtype == SCATTERPTX_F64 ? 8 : 16; }

int64_t red_batch_step(scatterptx_dtype dtype, scatterptx_index_type index_type, int64_t row_bytes) {
  // Rows for two batches in every group of any grid the planner may choose
  // (at most two waves of the CTAs the thread limit allows, at most 256
  // groups a CTA): its grid is then its cap, as for red_prefetch_shape.
  const int64_t thread_limit_ctas =
      int64_t{device_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)} *
      (device_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / kRedThreadsPerCta);
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.dtype = dtype;
  args.index_type = index_type;
  args.path = SCATTERPTX_PATH_RED;
  args.cols = row_bytes / static_cast<int64_t>(element_bytes(dtype));
  args.out_row_stride = args.src_row_stride = args.cols;
  args.out_rows = 1;
  args.src_rows = 2 * kRowsPerBatch * kRedThreadsPerCta * 2 * thread_limit_ctas;
  // Only described, never run, so the pointers are placeholders: aligned
  // as cuMemAlloc's, and far enough apart not to overlap.
  args.out = reinterpret_cast<void*>(uintptr_t{1} << 40);
  args.src = reinterpret_cast<const void*>(uintptr_t{1} << 41);
  args.index = reinterpret_cast<const void*>(uintptr_t{1} << 42);
  const std::string plan = describe_plan(args);
  const int64_t grid_x = plan_number(plan, "grid");
  const int64_t lanes = plan_number(plan, "lanes_per_row");
  if (plan.rfind("path=red", 0) != 0 || grid_x <= 0 || lanes <= 0) {
    throw std::runtime_error("red_batch_step: no red grid in the plan: " + plan);
  }
  return groups_of_lanes(grid_x, lanes);
}

ScatterShape contiguous_shape(scatterptx_dtype dtype, int64_t out_rows, int64_t src_rows, int64_t cols) {
  ScatterShape s;
  s.dtype = dtype;
  s.out_rows = out_rows;
  s.src_rows = src_rows;
  s.cols = cols;
  return s;
}

ScatterShape red_prefetch_shape(scatterptx_dtype dtype, scatterptx_index_type index_type, int64_t row_bytes) {
  const int64_t step = red_batch_step(dtype, index_type, row_bytes);
  ScatterShape s;
  s.dtype = dtype;
  s.index_type = index_type;
  s.cols = row_bytes / static_cast<int64_t>(element_bytes(dtype));
  s.out_rows = device_attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) / row_bytes + 4099;
  // 2.25 x step full batches of four and one of three rows: group g takes
  // batches g and g + step, and g + 2 step where that exists.
  s.src_rows = (2 * kRowsPerBatch + 1) * step + 3;
  return s;
}

void check_short_row_batches(const std::string& plan, int64_t src_rows) {
  EXPECT_EQ(plan_number(plan, "prefetch_out"), 1) << plan;
  const int64_t lanes = plan_number(plan, "lanes_per_row");
  const int64_t grid_x = plan_number(plan, "grid");
  ASSERT_GT(lanes, 0) << plan;
  ASSERT_GT(grid_x, 0) << plan;
  // The rows red_prefetch_shape gives a step: with the plan's groups as the
  // step, group g takes batches g, g + step and (a quarter of them) g + 2 step.
  const int64_t groups = groups_of_lanes(grid_x, lanes);
  EXPECT_EQ(src_rows, (2 * kRowsPerBatch + 1) * groups + 3)
      << "the shape's batch step is not the plan's " << groups << " groups of lanes: " << plan;
  EXPECT_NE(src_rows % kRowsPerBatch, 0) << "the last batch should be partial: " << plan;
}

void expect_scatter_result(const ScatterShape& shape, const HostScatter& host, const DeviceScatter& device,
                           int repeats, Comparison comparison) {
  const HostMatrix got = device.download_out();
  if (comparison == Comparison::kOnChipSums) ASSERT_EQ(repeats, 1) << "on-chip sums are checked for one call";
  const CheckReport report =
      comparison == Comparison::kExact        ? check_exact_sums(host.out0, host.src, host.index, got, repeats)
      : comparison == Comparison::kOnChipSums ? check_on_chip_sums(host.out0, host.src, host.index, got)
                                              : check_scatter_add(host.out0, host.src, host.index, got, repeats);
  EXPECT_TRUE(report.ok) << shape.describe() << ", " << comparison_name(comparison) << ": " << report.summary();
  EXPECT_EQ(device.guard_damage(), "") << shape.describe();
}

void run_and_check(const ScatterShape& shape, scatterptx_path path, uint64_t seed, Comparison comparison) {
  SCOPED_TRACE(shape.describe() + ", path " + path_name(path) + ", " + comparison_name(comparison));
  HostScatter host = make_random_scatter(shape, seed);
  if (comparison == Comparison::kExact) {
    ASSERT_TRUE(make_sums_exact(host, derive_seed(seed, 8))) << "a target takes too many rows for exact sums";
  }
  DeviceScatter device(shape, host);
  const scatterptx_scatter_add_args args = device.args(path, SCATTERPTX_INDEX_RECORD);
  const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);

  const DeviceScatter::Refusal refusal = device.refusal(path);
  if (refusal == DeviceScatter::Refusal::kMust ||
      (refusal == DeviceScatter::Refusal::kMay && status == SCATTERPTX_ERROR_INVALID_ARGUMENT)) {
    EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT)
        << "a forced path on ineligible input must be rejected";
    EXPECT_STRNE(scatterptx_last_error_message(), "");
    EXPECT_TRUE(device.download_out().bytes == host.out0.bytes)
        << "a rejected call wrote to out";
    EXPECT_EQ(device.guard_damage(), "");
    return;
  }
  ASSERT_EQ(status, SCATTERPTX_SUCCESS)
      << scatterptx_status_name(status) << ": " << scatterptx_last_error_message();
  expect_scatter_result(shape, host, device, 1, comparison);

  int64_t bad_position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&bad_position), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  EXPECT_EQ(bad_position, -1) << "every index was valid";

  if (shape.src_rows > 0 && shape.cols > 0) {
    const std::string plan = describe_plan(args);
    if (path == SCATTERPTX_PATH_RED || (path == SCATTERPTX_PATH_AUTO && !device.tma_eligible())) {
      EXPECT_NE(plan.find("path=red"), std::string::npos) << plan;
    } else if (path == SCATTERPTX_PATH_TMA) {
      EXPECT_NE(plan.find("path=tma"), std::string::npos) << plan;
    } else if (path == SCATTERPTX_PATH_PRIVATE) {
      EXPECT_NE(plan.find("path=private"), std::string::npos) << plan;
    }
  }
}

}  // namespace scatterptx_test
