#include "stress_run.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "failure_log.hpp"
#include "memory_usage.hpp"
#include "scatterptx/scatterptx.h"
#include "worker.hpp"

namespace scatterptx_stress {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Calls of every kind in both contexts for each thread, graphs from the
// first thread only: every module, pool and driver resource a call can
// need exists before memory is first read.
std::vector<uint64_t> warmup_calls(int thread) {
  static const WarmupRole kRoles[] = {WarmupRole::kDefault,    WarmupRole::kDefault, WarmupRole::kForcedPath,
                                      WarmupRole::kForcedPath, WarmupRole::kForcedPath, WarmupRole::kGrouped,
                                      WarmupRole::kGrouped,    WarmupRole::kPlan,    WarmupRole::kPlan};
  std::vector<uint64_t> calls;
  uint64_t m = 0;
  for (int context = 0; context < kContexts; ++context) {
    // j % 2 is the context: see warmup_call.
    const auto j = [&] { return (static_cast<uint64_t>(thread) * 1024 + m++) * 2 + static_cast<uint64_t>(context); };
    for (WarmupRole role : kRoles) calls.push_back(warmup_call(j(), role));
    if (thread == 0) calls.push_back(warmup_call(j(), WarmupRole::kGraph));
  }
  return calls;
}

class StressRun {
 public:
  StressRun(const Options& options, uint64_t seed, const StressContexts& contexts)
      : options_(options), seed_(seed), contexts_(contexts) {
    shared_.graph_replays = options.graph_replays;
  }

  int run();

 private:
  int64_t finished_calls() const {
    int64_t total = 0;
    for (const auto& count : shared_.finished_by_kind) total += count.load();
    return total;
  }
  // Runs one Worker per thread over the calls next() hands out, watching
  // for progress meanwhile.
  void run_workers(int threads, const std::function<bool(int thread, uint64_t* call)>& next,
                   bool with_taker);
  void watch(const std::vector<std::unique_ptr<Worker>>& workers, const std::atomic<int>& running);
  void take_until(const std::atomic<bool>& done);
  void final_takes();
  void report_hang(const std::vector<std::unique_ptr<Worker>>& workers) const;
  void print_failures() const;

  const Options& options_;
  uint64_t seed_;
  const StressContexts& contexts_;
  RunShared shared_;
  FailureLog failures_{5};
  Clock::time_point started_ = Clock::now();
};

void StressRun::run_workers(int threads, const std::function<bool(int thread, uint64_t* call)>& next,
                            bool with_taker) {
  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < threads; ++t) {
    workers.push_back(std::make_unique<Worker>(t, options_.streams, seed_, contexts_, shared_, failures_));
  }
  std::atomic<int> running{threads};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      workers[t]->run([&, t](uint64_t* call) { return next(t, call); });
      --running;
    });
  }
  std::atomic<bool> done{false};
  std::thread taker;
  if (with_taker) taker = std::thread([&] { take_until(done); });
  watch(workers, running);
  for (std::thread& thread : pool) thread.join();
  done = true;
  if (taker.joinable()) taker.join();
}

void StressRun::watch(const std::vector<std::unique_ptr<Worker>>& workers, const std::atomic<int>& running) {
  int64_t last_finished = finished_calls();
  Clock::time_point last_change = Clock::now();
  Clock::time_point last_print = Clock::now();
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const int64_t finished = finished_calls();
    if (finished != last_finished) {
      last_finished = finished;
      last_change = Clock::now();
    }
    if (seconds_since(last_change) > options_.hang_seconds) report_hang(workers);  // does not return
    if (seconds_since(last_print) >= 30) {
      last_print = Clock::now();
      std::fprintf(stderr, "scatterptx_stress: %.0f s, %lld calls checked, %lld failures\n", seconds_since(started_),
                   static_cast<long long>(finished), static_cast<long long>(failures_.count()));
    }
  }
}

void StressRun::report_hang(const std::vector<std::unique_ptr<Worker>>& workers) const {
  std::fflush(stdout);
  std::fprintf(stderr, "scatterptx_stress: HANG: no call finished for %d s; each thread was at:\n",
               options_.hang_seconds);
  for (size_t t = 0; t < workers.size(); ++t) {
    const uint64_t call = workers[t]->current_call();
    std::fprintf(stderr, "  thread %zu: %s\n", t,
                 call == kNoCall ? "(between calls)" : case_for_call(seed_, call).describe().c_str());
  }
  print_failures();
  std::fflush(stderr);
  std::_Exit(kExitFailure);  // threads stuck in the driver cannot be joined
}

// A thread of its own that takes each context's index-error record every
// few milliseconds, racing the RECORD launches of the workers.
void StressRun::take_until(const std::atomic<bool>& done) {
  try {
    while (!done.load()) {
      for (int context = 0; context < kContexts; ++context) {
        GateCall call(shared_.gate);
        contexts_.make_current(context);
        int64_t position = -1;
        const scatterptx_status status = scatterptx_take_index_error(&position);
        if (status != SCATTERPTX_SUCCESS) {
          failures_.add({-1, "the taking thread", {std::string("scatterptx_take_index_error returned ") +
                                                   scatterptx_status_name(status) + " (" +
                                                   scatterptx_last_error_message() + ")"}});
          return;
        }
        shared_.ledgers[context].taken(position);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  } catch (const std::exception& error) {
    failures_.add({-1, "the taking thread", {error.what()}});
  }
}

// After the last launch: what no take has seen yet, then each ledger's verdict.
void StressRun::final_takes() {
  for (int context = 0; context < kContexts; ++context) {
    contexts_.make_current(context);
    int64_t position = -1;
    const scatterptx_status status = scatterptx_take_index_error(&position);
    if (status != SCATTERPTX_SUCCESS) {
      failures_.add({-1, "the last take in context " + std::to_string(context),
                     {std::string(scatterptx_status_name(status)) + " (" + scatterptx_last_error_message() + ")"}});
      continue;
    }
    shared_.ledgers[context].taken(position);
    const std::string verdict = shared_.ledgers[context].verdict();
    if (!verdict.empty()) failures_.add({-1, "the index-error record of context " + std::to_string(context), {verdict}});
  }
  contexts_.make_current(0);
}

void StressRun::print_failures() const {
  for (const Failure& failure : failures_.first()) std::printf("%s", format_failure(failure, seed_).c_str());
  if (failures_.count() > static_cast<int64_t>(failures_.first().size())) {
    std::printf("... and %lld more failures\n", static_cast<long long>(failures_.count() - failures_.first().size()));
  }
  std::fflush(stdout);
}

int StressRun::run() {
  char bound[64];
  if (options_.replay >= 0) {
    std::snprintf(bound, sizeof bound, "replaying call %lld", static_cast<long long>(options_.replay));
  } else if (options_.seconds > 0) {
    std::snprintf(bound, sizeof bound, "for %g s", options_.seconds);
  } else {
    std::snprintf(bound, sizeof bound, "%lld calls", static_cast<long long>(options_.calls));
  }
  std::printf("scatterptx_stress: seed %llu, %d thread(s) x %d stream(s) in each of %d contexts, %s\n",
              static_cast<unsigned long long>(seed_), options_.replay >= 0 ? 1 : options_.threads, options_.streams,
              kContexts, bound);
  std::fflush(stdout);

  if (options_.replay >= 0) {
    std::printf("%s\n", case_for_call(seed_, static_cast<uint64_t>(options_.replay)).describe().c_str());
    std::atomic<bool> handed{false};
    run_workers(1, [&](int, uint64_t* call) {
      *call = static_cast<uint64_t>(options_.replay);
      return !handed.exchange(true);
    }, false);
    final_takes();
    print_failures();
    std::printf("scatterptx_stress: %s: call %lld, failures=%lld\n", failures_.count() == 0 ? "PASS" : "FAIL",
                static_cast<long long>(options_.replay), static_cast<long long>(failures_.count()));
    return failures_.count() == 0 ? kExitOk : kExitFailure;
  }

  std::vector<std::vector<uint64_t>> warmups;
  for (int t = 0; t < options_.threads; ++t) warmups.push_back(warmup_calls(t));
  std::vector<size_t> handed(static_cast<size_t>(options_.threads), 0);
  run_workers(options_.threads, [&](int t, uint64_t* call) {
    if (handed[t] == warmups[t].size()) return false;
    *call = warmups[t][handed[t]++];
    return true;
  }, false);
  const int64_t warmup_finished = finished_calls();
  MemoryReading before;
  try {
    before = read_memory(contexts_);
  } catch (const std::exception& error) {
    failures_.add({-1, "reading memory after the warm-up", {error.what()}});
  }

  const Clock::time_point main_started = Clock::now();
  const Clock::time_point deadline =
      main_started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.seconds));
  std::atomic<uint64_t> next_call{0};
  run_workers(options_.threads, [&](int, uint64_t* call) {
    if (failures_.count() >= options_.max_failures) return false;
    if (options_.seconds > 0 && Clock::now() >= deadline) return false;
    *call = next_call++;
    return options_.seconds > 0 || *call < static_cast<uint64_t>(options_.calls);
  }, true);
  const double main_seconds = seconds_since(main_started);
  const int64_t main_finished = finished_calls() - warmup_finished;

  std::string memory_verdict;
  MemoryReading after;
  try {
    final_takes();
    after = read_memory(contexts_);
    memory_verdict = memory_growth_verdict(before, after, options_.device_slack_mib, options_.rss_slack_mib);
    if (!memory_verdict.empty()) failures_.add({-1, "memory flatness", {memory_verdict}});
  } catch (const std::exception& error) {
    failures_.add({-1, "the last takes and memory reading", {error.what()}});
  }

  print_failures();
  int64_t takes = 0;
  int64_t answered = 0;
  for (const IndexLedger& ledger : shared_.ledgers) {
    takes += ledger.takes();
    answered += ledger.answers_with_position();
  }
  std::printf("scatterptx_stress: kinds: default=%lld forced=%lld grouped=%lld plan=%lld graph=%lld "
              "(%lld graph launches); %lld forced calls refused as expected; %lld calls with bad indices; "
              "%lld takes (%lld with a position); workspace pools %s -> %s\n",
              static_cast<long long>(shared_.finished_by_kind[0].load()),
              static_cast<long long>(shared_.finished_by_kind[1].load()),
              static_cast<long long>(shared_.finished_by_kind[2].load()),
              static_cast<long long>(shared_.finished_by_kind[3].load()),
              static_cast<long long>(shared_.finished_by_kind[4].load()),
              static_cast<long long>(shared_.graph_launches.load()), static_cast<long long>(shared_.refused.load()),
              static_cast<long long>(shared_.bad_index_calls.load()), static_cast<long long>(takes),
              static_cast<long long>(answered), format_mib(before.pool_reserved_bytes).c_str(),
              format_mib(after.pool_reserved_bytes).c_str());
  const bool passed = failures_.count() == 0;
  std::printf("scatterptx_stress: %s: calls=%lld (+%lld warm-up) threads=%d streams=%d contexts=%d failures=%lld "
              "device_mem=%s->%s (outside pools, +%lld MiB allowed) rss=%s->%s (+%lld MiB allowed) seconds=%.1f "
              "seed=%llu\n",
              passed ? "PASS" : "FAIL", static_cast<long long>(main_finished),
              static_cast<long long>(warmup_finished), options_.threads, options_.streams, kContexts,
              static_cast<long long>(failures_.count()), format_mib(before.device_outside_pools()).c_str(),
              format_mib(after.device_outside_pools()).c_str(), static_cast<long long>(options_.device_slack_mib),
              format_mib(before.rss_bytes).c_str(), format_mib(after.rss_bytes).c_str(),
              static_cast<long long>(options_.rss_slack_mib), main_seconds, static_cast<unsigned long long>(seed_));
  return passed ? kExitOk : kExitFailure;
}

}  // namespace

int run_stress(const Options& options, uint64_t seed, const GpuProbe& gpu) {
  StressContexts contexts(gpu.device);
  // The library's state in both contexts, as the bench does: a missing
  // driver or an old GPU is "no usable GPU", anything else a failure.
  for (int context = 0; context < kContexts; ++context) {
    contexts.make_current(context);
    const scatterptx_status prepared = scatterptx_prepare();
    if (prepared == SCATTERPTX_ERROR_NO_DRIVER || prepared == SCATTERPTX_ERROR_UNSUPPORTED_DEVICE) {
      std::printf("scatterptx_stress: no usable GPU: scatterptx_prepare: %s\n", scatterptx_last_error_message());
      return kExitNoGpu;
    }
    if (prepared != SCATTERPTX_SUCCESS) {
      std::printf("scatterptx_stress: FAIL: scatterptx_prepare in context %d returned %s (%s)\n", context,
                  scatterptx_status_name(prepared), scatterptx_last_error_message());
      return kExitFailure;
    }
  }
  contexts.make_current(0);
  int status = StressRun(options, seed, contexts).run();
  try {
    contexts.close();
  } catch (const std::exception& error) {
    std::printf("scatterptx_stress: FAIL: destroying the second context: %s\n", error.what());
    status = kExitFailure;
  }
  return status;
}

}  // namespace scatterptx_stress
