#include "tensor_map.hpp"

#include <cstdio>

#include "errors.hpp"

namespace scatterptx::detail {
namespace {

CUtensorMapDataType map_data_type(scatterptx_dtype dtype) {
  switch (dtype) {
    case SCATTERPTX_F16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case SCATTERPTX_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case SCATTERPTX_F64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    default: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
}

std::string describe_fields(const RowTensorMapFields& f) {
  // snprintf, not a stream: see StreamingPlan::describe.
  char text[512];
  std::snprintf(text, sizeof(text),
                "tensor map fields: dataType=%d (elem %zu B) rank=2 globalAddress=0x%llx globalDim={%llu, %llu} "
                "globalStrides={%llu} boxDim={%u, %u} elementStrides={1, 1} interleave=NONE swizzle=NONE "
                "l2Promotion=L2_256B oobFill=NONE(zeros)",
                static_cast<int>(map_data_type(f.dtype)), scatterptx_dtype_size(f.dtype),
                static_cast<unsigned long long>(f.address), static_cast<unsigned long long>(f.cols),
                static_cast<unsigned long long>(f.rows), static_cast<unsigned long long>(f.row_stride_bytes),
                static_cast<unsigned>(f.box_elems), static_cast<unsigned>(f.box_rows));
  return text;
}

}  // namespace

std::string row_tensor_map_violations(const RowTensorMapFields& f) {
  const uint64_t elem = scatterptx_dtype_size(f.dtype);
  std::string out;
  // Limits of cuTensorMapEncodeTiled, each as the driver states it.
  if (f.address % 16 != 0) out += "globalAddress must be 16-byte aligned\n";
  if (f.cols < 1 || f.cols > (uint64_t{1} << 32)) out += "globalDim[0] (cols) must be in [1, 2^32]\n";
  if (f.rows < 1 || f.rows > (uint64_t{1} << 32)) out += "globalDim[1] (rows) must be in [1, 2^32]\n";
  if (f.row_stride_bytes % 16 != 0) out += "globalStrides[0] must be a multiple of 16 bytes\n";
  if (f.row_stride_bytes >= (uint64_t{1} << 40)) out += "globalStrides[0] must be below 2^40 bytes\n";
  if (f.row_stride_bytes < f.cols * elem) out += "globalStrides[0] must cover a whole row\n";
  if (f.box_elems < 1 || f.box_elems > 256) out += "boxDim[0] must be in [1, 256]\n";
  if ((f.box_elems * elem) % 16 != 0) out += "boxDim[0] * element size must be a multiple of 16 bytes\n";
  if (f.box_rows < 1 || f.box_rows > 256) out += "boxDim[1] must be in [1, 256]\n";
  return out;
}

CUtensorMap encode_row_tensor_map(const DriverApi& api, const RowTensorMapFields& f) {
  const std::string violations = row_tensor_map_violations(f);
  if (!violations.empty()) {
    fail(SCATTERPTX_ERROR_INVALID_ARGUMENT, "cannot encode the src tensor map:\n" + violations + describe_fields(f));
  }
  CUtensorMap map;
  const cuuint64_t global_dim[2] = {f.cols, f.rows};
  const cuuint64_t global_strides[1] = {f.row_stride_bytes};
  const cuuint32_t box_dim[2] = {f.box_elems, f.box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = api.cuTensorMapEncodeTiled(
      &map, map_data_type(f.dtype), 2, reinterpret_cast<void*>(f.address), global_dim, global_strides, box_dim,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    fail(SCATTERPTX_ERROR_DRIVER, describe_driver_error(api, "cuTensorMapEncodeTiled", result) + "; " +
                                      describe_fields(f));
  }
  return map;
}

}  // namespace scatterptx::detail
