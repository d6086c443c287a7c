#include "describe.hpp"

#include <fstream>

#include "driver.hpp"
#include "element_types.hpp"
#include "error_bound.hpp"
#include "floors.hpp"
#include "inputs.hpp"
#include "json_writer.hpp"

namespace scatterptx_bench {
namespace {

constexpr scatterptx_dtype kDtypes[] = {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64};

void write_error_bound(JsonWriter& json) {
  json.begin_object();
  json.field("formula", scatterptx_testing::rounding_error_bound_text());
  json.field("reference_unit_roundoff", scatterptx_testing::reference_unit_roundoff());
  for (const char* what : {"unit_roundoff", "smallest_normal"}) {
    json.key(what);
    json.begin_object();
    for (scatterptx_dtype dtype : kDtypes) {
      json.field(scatterptx_dtype_name(dtype), what[0] == 'u' ? scatterptx_testing::unit_roundoff(dtype)
                                                              : scatterptx_testing::smallest_normal(dtype));
    }
    json.end_object();
  }
  json.end_object();
}

// The index as raw int64s (the host's byte order: little-endian on every
// machine the bench runs on), for torch.from_file.
std::string write_index_file(const std::string& index_dir, const Scenario& s,
                             const std::vector<int64_t>& index) {
  const std::string path = index_dir + "/" + s.name + ".int64";
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(index.data()),
             static_cast<std::streamsize>(index.size() * sizeof(int64_t)));
  if (!file) throw BenchError("writing the index file '" + path + "' failed");
  return path;
}

void write_scenario(JsonWriter& json, const Scenario& s, const std::string& index_dir) {
  const int64_t index_bytes = sizeof(int64_t);
  const std::vector<int64_t> index = scenario_index(s);
  const int64_t distinct = count_distinct_targets(index, s.out_rows);
  const FloorBytes floors = floor_bytes(s.src_rows, distinct, row_bytes(s), index_bytes);
  json.begin_object();
  json.field("name", s.name);
  json.field("kind", index_kind_text(s));
  json.field("src_rows", s.src_rows);
  json.field("out_rows", s.out_rows);
  json.field("cols", s.cols);
  json.field("dtype", scatterptx_dtype_name(s.dtype));
  json.field("row_bytes", row_bytes(s));
  json.field("index_bytes", index_bytes);
  json.field("distinct_targets", distinct);
  if (!index_dir.empty()) json.field("index_file", write_index_file(index_dir, s, index));
  json.key("floors_bytes");
  json.begin_object();
  json.field("ideal", floors.ideal);
  json.field("no_reuse", floors.no_reuse);
  json.field("copy", copy_bytes(s.src_rows, row_bytes(s)));
  json.end_object();
  json.end_object();
}

}  // namespace

void write_description(const std::string& path, const std::vector<Scenario>& scenarios, bool quick,
                       int64_t head_start_cycles, const std::string& index_dir) {
  std::ofstream file(path);
  if (!file) throw BenchError("cannot open '" + path + "' for writing");
  JsonWriter json(file);
  json.begin_object();
  json.field("quick", quick);
  json.field("head_start_cycles", head_start_cycles);
  json.key("error_bound");
  write_error_bound(json);
  json.key("scenarios");
  json.begin_array();
  for (const Scenario& s : scenarios) write_scenario(json, s, index_dir);
  json.end_array();
  json.end_object();
  file << "\n";
  if (!file) throw BenchError("writing '" + path + "' failed");
}

}  // namespace scatterptx_bench
