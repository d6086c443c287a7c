// What every call of a run shares across threads.
#pragma once

#include <atomic>
#include <cstdint>

#include "capture_gate.hpp"
#include "index_ledger.hpp"
#include "stress_case.hpp"

namespace scatterptx_stress {

constexpr int kContexts = 2;  // the primary context and one made with cuCtxCreate

struct RunShared {
  CaptureGate gate;
  IndexLedger ledgers[kContexts];  // one index-error record per context
  int graph_replays = 1000;
  std::atomic<int64_t> finished_by_kind[kCallKinds] = {};
  std::atomic<int64_t> refused = {};     // forced paths refused as they must (or may) be
  std::atomic<int64_t> bad_index_calls = {};
  std::atomic<int64_t> graph_launches = {};
};

}  // namespace scatterptx_stress
