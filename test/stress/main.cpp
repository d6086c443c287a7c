// scatterptx_stress: concurrent random-shape calls of every kind, checked
// against a float64 reference, with device memory and host RSS held flat.
// docs/stress.md says what it covers and how to run it.
//
// stdout: the header, failures, the summary line. stderr: progress.
#include <cstdio>
#include <exception>
#include <random>
#include <string>

#include "gpu_setup.hpp"
#include "memory_usage.hpp"
#include "options.hpp"
#include "stress_run.hpp"

int main(int argc, char** argv) {
  using namespace scatterptx_stress;
  Options options;
  std::string error;
  if (!parse_options(argc, argv, &options, &error)) {
    std::fprintf(stderr, "scatterptx_stress: %s\n\n%s", error.c_str(), usage_text().c_str());
    return kExitUsage;
  }
  if (options.help) {
    std::printf("%s", usage_text().c_str());
    return kExitOk;
  }
  map_large_blocks_alone();
  uint64_t seed = options.seed;
  if (!options.seed_given) {
    std::random_device device;
    seed = (static_cast<uint64_t>(device()) << 32) ^ device();
  }
  try {
    const GpuProbe gpu = probe_gpu(options.device);
    if (!gpu.usable) {
      std::printf("scatterptx_stress: no usable GPU, nothing was run: %s\n", gpu.why_not.c_str());
      return kExitNoGpu;
    }
    std::printf("scatterptx_stress: device %d: %s (sm_%d%d)\n", options.device, gpu.name.c_str(), gpu.compute_major,
                gpu.compute_minor);
    return run_stress(options, seed, gpu);
  } catch (const std::exception& failure) {
    std::fflush(stdout);
    std::printf("scatterptx_stress: FAIL: %s (seed %llu)\n", failure.what(), static_cast<unsigned long long>(seed));
    return kExitFailure;
  }
}
