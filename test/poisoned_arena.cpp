#include "poisoned_arena.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace scatterptx_test {
namespace {

// Random bytes between and around the tensors: a stray write lands there.
constexpr size_t kGuardBytes = size_t{64} << 10;
constexpr size_t kRegionAlignment = 256;

size_t align_up(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

void fill_random(unsigned char* bytes, size_t count, Rng& rng) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const uint64_t word = rng.next();
    std::memcpy(bytes + i, &word, 8);
  }
  for (; i < count; ++i) bytes[i] = static_cast<unsigned char>(rng.next());
}

// Random values in out's columns, leaving the bytes after them (padding) as
// they are.
void write_out_values(const ScatterShape& s, uint64_t seed, unsigned char* out) {
  const HostMatrix values = random_matrix(s.dtype, s.out_rows, s.cols, s.out_stride(), 0, seed);
  const size_t value_bytes = static_cast<size_t>(s.cols) * element_bytes(s.dtype);
  for (int64_t r = 0; r < s.out_rows; ++r) {
    std::memcpy(out + static_cast<size_t>(r) * values.row_bytes(), values.row(r), value_bytes);
  }
}

std::string region_of(size_t at, size_t out_at, size_t src_at, size_t index_at, size_t workspace_at) {
  if (at >= workspace_at) return "workspace region + " + std::to_string(at - workspace_at);
  if (at >= index_at) return "index region + " + std::to_string(at - index_at);
  if (at >= src_at) return "src region + " + std::to_string(at - src_at);
  if (at >= out_at) return "out region + " + std::to_string(at - out_at);
  return "leading guard + " + std::to_string(at);
}

}  // namespace

PoisonedScatter::PoisonedScatter(const ScatterShape& shape, const HostScatter& host, size_t workspace_bytes,
                                 uint64_t seed, ArenaRoom room)
    : shape_(shape), src_(host.src), index_(host.index), workspace_bytes_(workspace_bytes) {
  out_bytes_ = static_cast<size_t>(shape.out_rows) * static_cast<size_t>(shape.out_stride()) *
               element_bytes(shape.dtype);
  const size_t src_bytes = host.src.bytes.size();
  index_capacity_ = host.index.size() * 8 + room.index;
  out_at_ = kGuardBytes;
  src_at_ = align_up(out_at_ + out_bytes_ + room.out + kGuardBytes, kRegionAlignment);
  index_at_ = align_up(src_at_ + src_bytes + room.src + kGuardBytes, kRegionAlignment);
  workspace_at_ = align_up(index_at_ + index_capacity_ + kGuardBytes, kRegionAlignment);
  const size_t total = workspace_at_ + workspace_bytes + kGuardBytes;

  expected_.resize(total);
  Rng rng(derive_seed(seed, 0xA7E4A));
  fill_random(expected_.data(), total, rng);
  write_out_values(shape, derive_seed(seed, 0x0F7), expected_.data() + out_at_);
  std::memcpy(expected_.data() + src_at_, host.src.bytes.data(), src_bytes);
  const std::vector<unsigned char> index_bytes = encode_indices(host.index, shape.index_type);
  std::memcpy(expected_.data() + index_at_, index_bytes.data(), index_bytes.size());
  storage_ = DeviceBuffer(total);
  upload(storage_.address(), expected_.data(), total);
  out0_ = HostMatrix(shape.dtype, shape.out_rows, shape.cols, shape.out_stride(), 0);
  std::memcpy(out0_.bytes.data(), expected_.data() + out_at_, out_bytes_);
}

scatterptx_scatter_add_args PoisonedScatter::args(scatterptx_path path, scatterptx_index_check check) const {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = out();
  args.out_rows = shape_.out_rows;
  args.out_row_stride = shape_.out_stride();
  args.src = src_pointer();
  args.src_rows = shape_.src_rows;
  args.src_row_stride = shape_.src_stride();
  args.cols = shape_.cols;
  args.dtype = shape_.dtype;
  args.index = index_pointer();
  args.index_type = shape_.index_type;
  args.index_check = check;
  args.path = path;
  return args;
}

void PoisonedScatter::set_index(const std::vector<int64_t>& index) {
  const std::vector<unsigned char> bytes = encode_indices(index, shape_.index_type);
  if (bytes.size() > index_capacity_) throw std::invalid_argument("index larger than its region");
  std::memcpy(expected_.data() + index_at_, bytes.data(), bytes.size());
  upload(storage_.address(index_at_), bytes.data(), bytes.size());
  index_ = index;
}

void PoisonedScatter::repoison_out(uint64_t seed) {
  write_out_values(shape_, seed, expected_.data() + out_at_);
  upload(storage_.address(out_at_), expected_.data() + out_at_, out_bytes_);
  std::memcpy(out0_.bytes.data(), expected_.data() + out_at_, out_bytes_);
}

std::vector<unsigned char> PoisonedScatter::read_back() const {
  std::vector<unsigned char> image(expected_.size());
  download(image.data(), storage_.address(), image.size());  // after synchronising the context
  return image;
}

std::string PoisonedScatter::first_change(const std::vector<unsigned char>& image, bool skip_out,
                                          bool skip_workspace) const {
  const auto compare = [&](size_t begin, size_t end) -> std::string {
    const auto mismatch = std::mismatch(image.begin() + static_cast<std::ptrdiff_t>(begin),
                                        image.begin() + static_cast<std::ptrdiff_t>(end),
                                        expected_.begin() + static_cast<std::ptrdiff_t>(begin));
    if (mismatch.first == image.begin() + static_cast<std::ptrdiff_t>(end)) return "";
    const size_t at = static_cast<size_t>(mismatch.first - image.begin());
    return "byte changed at " + region_of(at, out_at_, src_at_, index_at_, workspace_at_) + ": " +
           std::to_string(expected_[at]) + " -> " + std::to_string(image[at]);
  };
  std::vector<std::pair<size_t, size_t>> kept;  // ranges that must not change
  size_t from = 0;
  if (skip_out) {
    kept.emplace_back(from, out_at_);
    from = out_at_ + out_bytes_;
  }
  if (skip_workspace && workspace_bytes_ != 0) {
    kept.emplace_back(from, workspace_at_);
    from = workspace_at_ + workspace_bytes_;
  }
  kept.emplace_back(from, image.size());
  for (const auto& [begin, end] : kept) {
    const std::string change = compare(begin, end);
    if (!change.empty()) return change;
  }
  return "";
}

void PoisonedScatter::take(const std::vector<unsigned char>& image) {
  expected_ = image;
  std::memcpy(out0_.bytes.data(), expected_.data() + out_at_, out_bytes_);
}

bool PoisonedScatter::expect_rows_added(const std::vector<int64_t>& index, int repeats, bool workspace_may_change) {
  const std::vector<unsigned char> image = read_back();
  const std::string change = first_change(image, /*skip_out=*/true, workspace_may_change);
  EXPECT_EQ(change, "") << shape_.describe() << ": a byte outside out changed";
  HostMatrix got(shape_.dtype, shape_.out_rows, shape_.cols, shape_.out_stride(), 0);
  std::memcpy(got.bytes.data(), image.data() + out_at_, out_bytes_);
  const CheckReport report = check_scatter_add(out0_, src_, index, got, repeats);
  EXPECT_TRUE(report.ok) << shape_.describe() << ": " << report.summary();
  take(image);
  return change.empty() && report.ok;
}

bool PoisonedScatter::expect_unchanged(bool workspace_may_change) {
  const std::vector<unsigned char> image = read_back();
  const std::string change = first_change(image, /*skip_out=*/false, workspace_may_change);
  EXPECT_EQ(change, "") << shape_.describe() << ": nothing may change";
  take(image);
  return change.empty();
}

bool PoisonedScatter::expect_unchanged_outside_out(bool workspace_may_change) {
  const std::vector<unsigned char> image = read_back();
  const std::string change = first_change(image, /*skip_out=*/true, workspace_may_change);
  EXPECT_EQ(change, "") << shape_.describe() << ": a byte outside out changed";
  take(image);
  return change.empty();
}

}  // namespace scatterptx_test
