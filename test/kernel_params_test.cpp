// Host-only: each kernel family's argument struct (kernel_params.hpp) agrees
// with the .param list of every built entry of that family, read back from
// the PTX embedded in the library: same names, types and order, and packed()
// hands cuLaunchKernel one field per parameter, in that order.
#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "kernel_images.hpp"
#include "kernel_params.hpp"

namespace {

using namespace scatterptx::detail;

struct EntryParam {
  std::string ptx_type;
  std::string name;  // with an array's extent
};

std::string without_comments(const std::string& ptx) {
  std::string out;
  for (std::size_t at = 0; at < ptx.size();) {
    const std::size_t comment = ptx.find("//", at);
    const std::size_t end = comment == std::string::npos ? ptx.size() : comment;
    out += ptx.substr(at, end - at);
    if (comment == std::string::npos) break;
    at = ptx.find('\n', comment);
    if (at == std::string::npos) break;
  }
  return out;
}

std::string trimmed(const std::string& text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

// The .param list of the module's entry `entry`, as ptxas reads it.
std::vector<EntryParam> entry_params(const std::string& ptx, const std::string& entry) {
  const std::string text = without_comments(ptx);
  const std::size_t open = text.find(".entry " + entry + "(");
  if (open == std::string::npos) return {};
  const std::size_t begin = text.find('(', open) + 1;
  const std::string list = text.substr(begin, text.find(')', begin) - begin);
  std::vector<EntryParam> out;
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string item = trimmed(list.substr(at, comma - at));
    at = comma + 1;
    if (item.empty()) continue;
    const std::string keyword = ".param ";
    if (item.compare(0, keyword.size(), keyword) == 0) item = trimmed(item.substr(keyword.size()));
    const std::size_t space = item.find_last_of(" \t");
    out.push_back(space == std::string::npos ? EntryParam{"", item}
                                             : EntryParam{trimmed(item.substr(0, space)), item.substr(space + 1)});
  }
  return out;
}

std::size_t bytes_of(const std::string& ptx_type, const std::string& name) {
  if (ptx_type == ".u64") return 8;
  if (ptx_type == ".u32" || ptx_type == ".f32") return 4;
  const std::size_t extent = name.find('[');
  if (ptx_type.find(".b8") != std::string::npos && extent != std::string::npos) {
    return std::stoul(name.substr(extent + 1));
  }
  return 0;
}

// The struct whose packed() the launch of `family` passes, as the launches
// (host/launch.cpp, host/group_launch.cpp, host/index_errors.cpp) use them.
template <typename Params>
void expect_family_takes(KernelFamily family) {
  constexpr std::size_t field_count = sizeof(Params::kFields) / sizeof(Params::kFields[0]);
  Params params{};
  const auto packed = params.packed();
  ASSERT_EQ(packed.size(), field_count);
  // One field per parameter, in order, each as wide as its parameter.
  const char* base = reinterpret_cast<const char*>(&params);
  for (std::size_t i = 0; i < field_count; ++i) {
    SCOPED_TRACE(Params::kFields[i].name);
    const char* field = static_cast<const char*>(packed[i]);
    ASSERT_GE(field, base);
    ASSERT_LE(field + Params::kFields[i].bytes, base + sizeof(Params));
    if (i + 1 < field_count) {
      EXPECT_GE(static_cast<const char*>(packed[i + 1]) - field, static_cast<std::ptrdiff_t>(Params::kFields[i].bytes));
    }
  }
  int variants = 0;
  for (std::size_t v = 0; v < kKernelVariantCount; ++v) {
    const KernelVariant& variant = kKernelVariants[v];
    if (variant.family != family) continue;
    ++variants;
    SCOPED_TRACE(variant.name);
    EXPECT_EQ(variant.params, Params::kFields) << "the manifest names another struct's fields";
    EXPECT_EQ(variant.param_count, field_count);
    const std::vector<EntryParam> built = entry_params(kKernelImages[v].ptx, variant.entry);
    ASSERT_EQ(built.size(), field_count) << "the built entry has another number of parameters";
    for (std::size_t i = 0; i < field_count; ++i) {
      EXPECT_EQ(built[i].name, Params::kFields[i].name) << "parameter " << i;
      EXPECT_EQ(built[i].ptx_type, Params::kFields[i].ptx_type) << "parameter " << i << " " << built[i].name;
      EXPECT_EQ(bytes_of(built[i].ptx_type, built[i].name), Params::kFields[i].bytes) << built[i].name;
    }
  }
  EXPECT_GT(variants, 0) << "no variant of this family is built";
}

TEST(KernelParams, EveryBuiltEntryTakesItsFamilysStruct) {
  expect_family_takes<RowTmaReduceParams>(KernelFamily::row_tma_reduce);
  expect_family_takes<RowPrivateParams>(KernelFamily::row_private);
  expect_family_takes<RowRedParams>(KernelFamily::row_red);
  expect_family_takes<GroupHistogramParams>(KernelFamily::group_histogram_index);
  expect_family_takes<GroupHistogramParams>(KernelFamily::group_histogram_keys);
  expect_family_takes<GroupScanParams>(KernelFamily::group_scan);
  expect_family_takes<GroupScatterParams>(KernelFamily::group_scatter_index);
  expect_family_takes<GroupScatterParams>(KernelFamily::group_scatter_keys);
  expect_family_takes<GroupSegmentSumParams>(KernelFamily::group_segment_sum);
  expect_family_takes<GroupCombineParams>(KernelFamily::group_combine);
  expect_family_takes<IndexRecordTakeParams>(KernelFamily::index_record_take);
}

TEST(KernelParams, ReadsAnEntrysParameterList) {
  const std::string ptx =
      ".visible .entry k(\n"
      "    .param .align 64 .b8 src_map[128],   // a (comment, with) commas\n"
      "    .param .u64 out_ptr,\n"
      "    .param .f32 keep         // last\n"
      ")\n{\n}\n";
  const std::vector<EntryParam> params = entry_params(ptx, "k");
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].ptx_type, ".align 64 .b8");
  EXPECT_EQ(params[0].name, "src_map[128]");
  EXPECT_EQ(bytes_of(params[0].ptx_type, params[0].name), 128u);
  EXPECT_EQ(params[1].ptx_type, ".u64");
  EXPECT_EQ(params[1].name, "out_ptr");
  EXPECT_EQ(params[2].ptx_type, ".f32");
  EXPECT_EQ(params[2].name, "keep");
}

}  // namespace
