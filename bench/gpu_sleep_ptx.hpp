// The PTX of GpuSleep (bench only, so JIT-compiled at run time rather than
// assembled with the library's kernels). %clock64: PTX ISA, "Special
// Registers: %clock64"; .version 7.8 is the first with sm_90.
#pragma once

namespace scatterptx_bench {

inline constexpr char kGpuSleepPtx[] = R"ptx(
.version 7.8
.target sm_90
.address_size 64

.visible .entry scatterptx_bench_gpu_sleep(.param .u64 cycles)
{
  .reg .pred %p;
  .reg .u64 %target, %start, %now, %elapsed;
  ld.param.u64 %target, [cycles];
  mov.u64 %start, %clock64;
spin:
  mov.u64 %now, %clock64;
  sub.u64 %elapsed, %now, %start;
  setp.lt.u64 %p, %elapsed, %target;
  @%p bra spin;
  ret;
}
)ptx";

inline constexpr char kGpuSleepEntry[] = "scatterptx_bench_gpu_sleep";

}  // namespace scatterptx_bench
