// A device the planners may meet: an sm_90+ GPU's limits, varied within what
// real parts report, or an older GPU the planners must refuse.
#pragma once

#include "byte_reader.hpp"
#include "plan.hpp"

namespace scatterptx::fuzz {

detail::DeviceLimits read_device(ByteReader& in);

}  // namespace scatterptx::fuzz
