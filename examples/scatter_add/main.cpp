// out[index[i], :] += src[i, :] with libscatterptx on tensors from cudaMalloc
// and a cudaStream_t, checked against a double-precision reference on the
// host: first the one-call scatterptx::scatter_add, then a scatterptx::Plan
// (the index grouped once, for repeated adds) executed on the updated out.
// out starts random, so a kernel that skipped or overwrote rows would show.
//
// Without a usable GPU it says why and exits 77 (ctest's skip, SKIP_RETURN_CODE);
// a wrong result exits 1.
#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "scatterptx/scatterptx.hpp"

namespace {

constexpr int64_t kOutRows = 1000;
constexpr int64_t kSrcRows = 50000;
constexpr int64_t kCols = 256;

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "scatter_add_example: %s failed: %s\n", call, cudaGetErrorString(status));
    std::exit(1);
  }
}

// Device memory from cudaMalloc, freed on scope exit.
struct DeviceArray {
  explicit DeviceArray(size_t bytes) { check_cuda(cudaMalloc(&pointer, bytes), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(pointer); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void* pointer = nullptr;
};

// Why the library cannot run here, or "" when it can. The library works in
// the calling thread's current context: cudaSetDevice makes device 0's
// primary context current. Its own status comes first, since it names a
// missing driver plainly (the runtime calls that "insufficient driver").
std::string why_no_usable_gpu() {
  const scatterptx_status before_context = scatterptx_prepare();
  if (before_context == SCATTERPTX_ERROR_NO_DRIVER) return scatterptx_last_error_message();
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) return std::string("no CUDA GPU: ") + cudaGetErrorString(status);
  if (devices == 0) return "no CUDA GPU on this machine";
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree");  // the context exists from here on
  const scatterptx_status prepared = scatterptx_prepare();
  if (prepared == SCATTERPTX_ERROR_UNSUPPORTED_DEVICE) return scatterptx_last_error_message();
  scatterptx::throw_on_error(prepared);
  return "";
}

// Values in [-1, -1e-3] or [1e-3, 1]: never zero, so every added row counts.
float nonzero_value(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> magnitude(1e-3f, 1.0f);
  return (rng() & 1) != 0 ? magnitude(rng) : -magnitude(rng);
}

struct Reference {
  std::vector<double> sum;        // out0 + every src row added to it
  std::vector<double> magnitude;  // the same with absolute values: scales the rounding error
  std::vector<int64_t> rows_in;   // source rows per out row
};

// `repeats` rounds of out[index[i], :] += src[i, :] from out0, in double.
Reference reference(const std::vector<float>& out0, const std::vector<float>& src,
                    const std::vector<int64_t>& index, int repeats) {
  Reference r{std::vector<double>(out0.begin(), out0.end()), std::vector<double>(out0.size()),
              std::vector<int64_t>(kOutRows, 0)};
  for (size_t e = 0; e < out0.size(); ++e) r.magnitude[e] = std::fabs(out0[e]);
  for (int repeat = 0; repeat < repeats; ++repeat) {
    for (int64_t i = 0; i < kSrcRows; ++i) {
      const int64_t target = index[i];
      ++r.rows_in[target];
      for (int64_t c = 0; c < kCols; ++c) {
        r.sum[target * kCols + c] += src[i * kCols + c];
        r.magnitude[target * kCols + c] += std::fabs(src[i * kCols + c]);
      }
    }
  }
  return r;
}

// Whether got matches the reference within f32 rounding: each of the
// rows_in + 1 terms of a sum may add one rounding of the running total.
bool matches(const std::vector<float>& got, const Reference& expected, const char* what) {
  int64_t wrong = 0;
  for (int64_t t = 0; t < kOutRows; ++t) {
    for (int64_t c = 0; c < kCols; ++c) {
      const size_t e = static_cast<size_t>(t * kCols + c);
      const double tolerance = (expected.rows_in[t] + 1) * FLT_EPSILON * expected.magnitude[e];
      if (!(std::fabs(got[e] - expected.sum[e]) <= tolerance)) {
        if (wrong == 0) {
          std::printf("%s: out[%lld][%lld] = %.9g, expected %.9g (tolerance %.3g)\n", what,
                      static_cast<long long>(t), static_cast<long long>(c), got[e],
                      expected.sum[e], tolerance);
        }
        ++wrong;
      }
    }
  }
  if (wrong != 0) std::printf("%s: %lld of %lld values wrong\n", what, static_cast<long long>(wrong),
                              static_cast<long long>(kOutRows * kCols));
  return wrong == 0;
}

int run() {
  std::mt19937_64 rng(20);
  std::vector<float> out0(kOutRows * kCols), src(kSrcRows * kCols);
  std::vector<int64_t> index(kSrcRows);
  for (float& v : out0) v = nonzero_value(rng);
  for (float& v : src) v = nonzero_value(rng);
  std::uniform_int_distribution<int64_t> target(0, kOutRows - 1);
  for (int64_t& i : index) i = target(rng);

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  DeviceArray out(out0.size() * sizeof(float));
  DeviceArray source(src.size() * sizeof(float));
  DeviceArray targets(index.size() * sizeof(int64_t));
  check_cuda(cudaMemcpyAsync(out.pointer, out0.data(), out0.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check_cuda(cudaMemcpyAsync(source.pointer, src.data(), src.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
  check_cuda(cudaMemcpyAsync(targets.pointer, index.data(), index.size() * sizeof(int64_t),
                             cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");

  // cudaStream_t and the library's CUstream are the same type.
  const scatterptx::Matrix<void*> out_matrix{out.pointer, kOutRows, kCols, kCols};
  const scatterptx::Matrix<const void*> src_matrix{source.pointer, kSrcRows, kCols, kCols};
  std::vector<float> got(out0.size());
  auto download = [&] {
    check_cuda(cudaMemcpyAsync(got.data(), out.pointer, got.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  };

  // 1. One call: out = out0 + the sum.
  scatterptx::scatter_add(out_matrix, src_matrix, SCATTERPTX_F32, targets.pointer,
                          SCATTERPTX_INDEX_INT64, stream);
  download();
  bool ok = matches(got, reference(out0, src, index, 1), "scatter_add");

  // 2. A plan: the index grouped once; each execute adds the sum again.
  scatterptx::Plan plan(scatterptx::make_args(out_matrix, src_matrix, SCATTERPTX_F32,
                                              targets.pointer, SCATTERPTX_INDEX_INT64),
                        stream);
  plan.execute(out.pointer, source.pointer, stream);
  download();
  ok = matches(got, reference(out0, src, index, 2), "Plan::execute") && ok;

  // Every index was in range: no row was skipped.
  const int64_t bad_position = scatterptx::take_index_error();
  if (bad_position != -1) {
    std::printf("unexpected out-of-range index reported at position %lld\n",
                static_cast<long long>(bad_position));
    ok = false;
  }
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");

  std::printf("scatter_add_example: %s: %lld x %lld f32 out, %lld source rows, plan %s\n",
              ok ? "OK, out matches the reference" : "FAILED", static_cast<long long>(kOutRows),
              static_cast<long long>(kCols), static_cast<long long>(kSrcRows),
              plan.describe().c_str());
  return ok ? 0 : 1;
}

// No usable GPU: nothing was checked, which is no pass (ctest's SKIP_RETURN_CODE).
constexpr int kExitNothingRun = 77;

}  // namespace

int main() {
  try {
    const std::string why_not = why_no_usable_gpu();
    if (!why_not.empty()) {
      std::printf("scatter_add_example: nothing run, no usable GPU here: %s\n", why_not.c_str());
      return kExitNothingRun;
    }
    return run();
  } catch (const scatterptx::Error& error) {
    std::printf("scatter_add_example: FAILED: %s\n", error.what());
    return 1;
  }
}
