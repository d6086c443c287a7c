#include "fuzzed_device.hpp"

namespace scatterptx::fuzz {

detail::DeviceLimits read_device(ByteReader& in) {
  detail::DeviceLimits d;  // an H200's limits where a field reads zero
  const uint8_t flags = in.u8();
  if ((flags & 1) == 0) return d;
  static constexpr int kCapabilities[] = {90, 100, 120, 80, 89, 103};
  d.compute_capability = in.pick(kCapabilities);
  d.sm_count = 1 + in.u32() % 264;
  // Opt-in shared memory per block from 99 KB (sm_120's) to 227 KB
  // (sm_90's); an SM holds 1 KB more per CTA it reserves, as on every sm_90+
  // part.
  d.max_shared_per_block = 99 * 1024 + in.u32() % (128 * 1024 + 1);
  d.max_shared_per_sm = d.max_shared_per_block + 1024 * (1 + in.u8() % 4);
  static constexpr uint32_t kThreads[] = {2048, 1536, 1024};
  d.max_threads_per_sm = in.pick(kThreads);
  d.max_ctas_per_sm = 16 + in.u8() % 17;
  d.l2_bytes = (uint64_t{1} << 20) * (1 + in.u8());
  // The driver's resident CTAs of the red variants (0: not reported), and,
  // from the same byte, the summing variants' threads per CTA (0: not asked).
  const uint8_t resident = in.u8() % 9;
  static constexpr uint16_t kSummingThreads[] = {0, 1024, 896, 640, 1024, 512, 896, 1024, 256};
  for (std::size_t i = 0; i < detail::kKernelVariantCount; ++i) {
    const detail::KernelFamily family = detail::kKernelVariants[i].family;
    if (family == detail::KernelFamily::row_red) d.resident_ctas_per_sm[i] = resident;
    if (family == detail::KernelFamily::group_segment_sum || family == detail::KernelFamily::group_combine) {
      d.max_threads_per_cta[i] = kSummingThreads[resident];
    }
  }
  return d;
}

}  // namespace scatterptx::fuzz
