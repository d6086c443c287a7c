// Host tests of scatterptx_stress's parts that need no GPU: the command
// line, the case draw and its coverage, the inputs, the float64 comparison,
// the index-error ledger, the memory verdict and the capture gate.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capture_gate.hpp"
#include "case_inputs.hpp"
#include "failure_log.hpp"
#include "index_ledger.hpp"
#include "memory_usage.hpp"
#include "options.hpp"
#include "result_check.hpp"
#include "stress_case.hpp"

namespace scatterptx_stress {
namespace {

bool parse(std::vector<const char*> words, Options* options, std::string* error) {
  words.insert(words.begin(), "scatterptx_stress");
  return parse_options(static_cast<int>(words.size()), words.data(), options, error);
}

TEST(StressOptions, DefaultsAreAThousandCallsOnFourThreadsOfFourStreams) {
  Options options;
  std::string error;
  ASSERT_TRUE(parse({}, &options, &error)) << error;
  EXPECT_EQ(options.calls, 1000);
  EXPECT_EQ(options.seconds, 0);
  EXPECT_EQ(options.threads, 4);
  EXPECT_EQ(options.streams, 4);
  EXPECT_FALSE(options.seed_given);
  EXPECT_EQ(options.replay, -1);
  EXPECT_EQ(options.graph_replays, 1000);
}

TEST(StressOptions, ReadsEveryOption) {
  Options options;
  std::string error;
  ASSERT_TRUE(parse({"--seconds", "600", "--threads", "8", "--streams", "2", "--seed", "0x2a", "--graph-replays",
                     "10", "--device-slack-mib", "32", "--rss-slack-mib", "16", "--max-failures", "3",
                     "--hang-seconds", "60", "--device", "1"},
                    &options, &error))
      << error;
  EXPECT_EQ(options.seconds, 600);
  EXPECT_EQ(options.threads, 8);
  EXPECT_EQ(options.streams, 2);
  EXPECT_TRUE(options.seed_given);
  EXPECT_EQ(options.seed, 42u);
  EXPECT_EQ(options.graph_replays, 10);
  EXPECT_EQ(options.device_slack_mib, 32);
  EXPECT_EQ(options.rss_slack_mib, 16);
  EXPECT_EQ(options.max_failures, 3);
  EXPECT_EQ(options.hang_seconds, 60);
  EXPECT_EQ(options.device, 1);
  ASSERT_TRUE(parse({"--seed", "7", "--replay", "351"}, &options, &error)) << error;
  EXPECT_EQ(options.replay, 351);
  ASSERT_TRUE(parse({"--help"}, &options, &error)) << error;
  EXPECT_TRUE(options.help);
}

TEST(StressOptions, RefusesBadCommandLines) {
  const std::vector<std::vector<const char*>> bad = {
      {"--calls"},          {"--calls", "0"},          {"--calls", "12x"},   {"--threads", "0"},
      {"--streams", "-1"},  {"--seconds", "soon"},     {"--seconds", "0"},   {"--seed", "-3"},
      {"--frobnicate"},     {"stray"},                 {"--calls", "10", "--seconds", "5"},
      {"--replay", "3"},    {"--seed", "1", "--replay", "3", "--calls", "5"}};
  for (const auto& words : bad) {
    Options options;
    std::string error;
    EXPECT_FALSE(parse(words, &options, &error)) << words[0];
    EXPECT_NE(error, "") << words[0];
  }
}

// What the first `count` calls of a seed cover.
struct Coverage {
  std::set<CallKind> kinds;
  std::set<scatterptx_dtype> dtypes;
  std::set<scatterptx_index_type> index_types;
  std::set<scatterptx_path> forced_paths;
  std::set<std::string> group_modes;
  std::set<CapturedCall> captured;
  std::set<IndexPattern> patterns;
  std::set<int> contexts;
  int padded = 0, odd_width = 0, src_offset = 0, index_offset = 0, empty = 0, group_region = 0;
  int record_bad = 0, checked_bad = 0, checked_clean = 0, take_after = 0, must_refuse = 0;
  int own_workspace = 0, two_executes = 0, twin = 0;
  std::vector<uint64_t> graph_calls;
};

std::string group_mode(const scatterptx_group_options& o) {
  if (o.deterministic) return "deterministic";
  if (o.mode == SCATTERPTX_MODE_SEGMENTED) return "segmented";
  if (o.mode == SCATTERPTX_MODE_STREAMING) return "streaming";
  return "auto";
}

Coverage cover(uint64_t seed, uint64_t count) {
  Coverage c;
  for (uint64_t call = 0; call < count; ++call) {
    const StressCase s = make_case(seed, call);
    const StressShape& shape = s.shape;
    c.kinds.insert(s.kind);
    c.dtypes.insert(shape.dtype);
    c.index_types.insert(shape.index_type);
    c.contexts.insert(s.context);
    c.patterns.insert(s.pattern);
    if (s.kind == CallKind::kForcedPath) c.forced_paths.insert(s.path);
    if (s.kind == CallKind::kGrouped || s.kind == CallKind::kPlan) c.group_modes.insert(group_mode(s.options));
    if (s.kind == CallKind::kGraph) {
      c.captured.insert(s.captured);
      c.graph_calls.push_back(call);
    }
    c.padded += shape.out_row_stride > shape.cols || shape.src_row_stride > shape.cols;
    c.odd_width += shape.cols > 0 && shape.cols * static_cast<int64_t>(shape.element_bytes()) % 16 != 0;
    c.src_offset += shape.src_offset_bytes != 0;
    c.index_offset += shape.index_offset_bytes != 0;
    c.empty += shape.empty();
    c.group_region += shape.src_rows >= 65536;
    c.record_bad += !s.bad_positions.empty() && s.check == SCATTERPTX_INDEX_RECORD;
    c.checked_bad += !s.bad_positions.empty() && s.check == SCATTERPTX_INDEX_CHECKED;
    c.checked_clean += s.bad_positions.empty() && s.check == SCATTERPTX_INDEX_CHECKED;
    c.take_after += s.take_after;
    c.must_refuse += s.must_refuse;
    c.own_workspace += s.plan_own_workspace;
    c.two_executes += s.plan_executes == 2;
    c.twin += s.twin;
  }
  return c;
}

TEST(StressCases, AThousandCallsCoverEveryKindModeAndPath) {
  for (uint64_t seed : {1ull, 2ull, 0xFEEDull}) {
    SCOPED_TRACE(seed);
    const Coverage c = cover(seed, 1000);
    EXPECT_EQ(c.kinds.size(), static_cast<size_t>(kCallKinds));
    EXPECT_EQ(c.dtypes.size(), 4u);
    EXPECT_EQ(c.index_types.size(), 2u);
    EXPECT_EQ(c.forced_paths, (std::set<scatterptx_path>{SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_RED,
                                                          SCATTERPTX_PATH_PRIVATE}));
    EXPECT_EQ(c.group_modes, (std::set<std::string>{"segmented", "deterministic", "auto", "streaming"}));
    EXPECT_EQ(c.captured.size(), 3u);
    EXPECT_EQ(c.patterns.size(), 3u);
    EXPECT_EQ(c.contexts, (std::set<int>{0, 1}));
    EXPECT_EQ(c.graph_calls, (std::vector<uint64_t>{100, 350, 600, 850}));
    for (int count : {c.padded, c.odd_width, c.src_offset, c.index_offset, c.empty, c.group_region, c.record_bad,
                      c.checked_bad, c.checked_clean, c.take_after, c.must_refuse, c.own_workspace, c.two_executes,
                      c.twin}) {
      EXPECT_GT(count, 0);
    }
  }
}

TEST(StressCases, TheShortRunHasAGraph) {
  EXPECT_EQ(cover(5, 200).graph_calls, std::vector<uint64_t>{100});
}

TEST(StressCases, EveryCaseKeepsItsPromises) {
  for (uint64_t call = 0; call < 3000; ++call) {
    const StressCase s = make_case(77, call);
    const StressShape& shape = s.shape;
    SCOPED_TRACE(s.describe());
    ASSERT_GE(shape.out_rows, 1);
    ASSERT_GE(shape.out_row_stride, std::max<int64_t>(shape.cols, 1));
    ASSERT_GE(shape.src_row_stride, std::max<int64_t>(shape.cols, 1));
    EXPECT_EQ(shape.src_offset_bytes % shape.element_bytes(), 0u);
    EXPECT_EQ(shape.index_offset_bytes % (shape.index_type == SCATTERPTX_INDEX_INT32 ? 4 : 8), 0u);
    if (shape.src_rows >= 65536) {
      EXPECT_LE(shape.src_rows, kMaxGroupRegionRows);
      EXPECT_LE(shape.cols * static_cast<int64_t>(shape.element_bytes()), kMaxGroupRegionRowBytes + 8);
    } else {
      EXPECT_LE(shape.src_rows * shape.cols, kMaxOtherElements);
    }
    if (s.kind == CallKind::kForcedPath && s.path == SCATTERPTX_PATH_TMA) {
      EXPECT_EQ(s.must_refuse, !shape.empty() && !shape.tma_eligible());
    }
    if (s.kind == CallKind::kForcedPath && s.path == SCATTERPTX_PATH_PRIVATE) {
      EXPECT_TRUE(shape.empty() || shape.tma_eligible());
      EXPECT_LE(shape.out_rows, 4096);
      EXPECT_FALSE(s.must_refuse);
    }
    if (s.kind != CallKind::kForcedPath) {
      EXPECT_FALSE(s.must_refuse || s.may_refuse);
    }
    if (s.kind == CallKind::kGraph) {
      EXPECT_GE(4 * shape.out_rows, shape.src_rows) << "a thousand replays could overflow f16";
      EXPECT_NE(s.pattern, IndexPattern::kHot);
      EXPECT_TRUE(s.bad_positions.empty());
      EXPECT_FALSE(shape.empty());
    }
    if (s.kind == CallKind::kPlan || s.take_after) {
      EXPECT_EQ(s.check, SCATTERPTX_INDEX_RECORD);
    }
    EXPECT_TRUE(std::is_sorted(s.bad_positions.begin(), s.bad_positions.end()));
    EXPECT_EQ(std::adjacent_find(s.bad_positions.begin(), s.bad_positions.end()), s.bad_positions.end());
    for (int64_t p : s.bad_positions) {
      EXPECT_GE(p, 0);
      EXPECT_LT(p, shape.src_rows);
    }
    if (!s.bad_positions.empty()) {
      EXPECT_GT(shape.cols, 0) << "a no-op records nothing";
    }
  }
}

TEST(StressCases, AreAFunctionOfTheSeedAndTheCallAlone) {
  for (uint64_t call : {0ull, 17ull, 100ull, 999ull}) {
    EXPECT_EQ(make_case(9, call).describe(), make_case(9, call).describe());
    EXPECT_EQ(case_for_call(9, call).describe(), make_case(9, call).describe());
  }
  EXPECT_NE(make_case(9, 17).describe(), make_case(10, 17).describe());
}

TEST(StressCases, WarmupCallsHaveTheirRolesKindAndContext) {
  const std::pair<WarmupRole, CallKind> roles[] = {{WarmupRole::kDefault, CallKind::kDefault},
                                                   {WarmupRole::kForcedPath, CallKind::kForcedPath},
                                                   {WarmupRole::kGrouped, CallKind::kGrouped},
                                                   {WarmupRole::kPlan, CallKind::kPlan},
                                                   {WarmupRole::kGraph, CallKind::kGraph}};
  for (uint64_t j = 0; j < 40; ++j) {
    for (const auto& [role, kind] : roles) {
      const StressCase c = case_for_call(3, warmup_call(j, role));
      EXPECT_EQ(c.kind, kind);
      EXPECT_EQ(c.context, static_cast<int>(j % 2));
      EXPECT_GE(c.call, kWarmupFirstCall);
    }
  }
}

// The first call of a seed whose case satisfies want.
template <typename Want>
StressCase find_case(Want want) {
  for (uint64_t call = 0; call < 100000; ++call) {
    const StressCase c = make_case(11, call);
    if (want(c)) return c;
  }
  ADD_FAILURE() << "no such case in 100000 calls";
  return make_case(11, 0);
}

TEST(StressInputs, OnlyTheBadPositionsAreOutOfRange) {
  for (auto type : {SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64}) {
    const StressCase c = find_case([&](const StressCase& s) {
      return s.bad_positions.size() >= 2 && s.shape.index_type == type && s.shape.src_rows < 5000;
    });
    SCOPED_TRACE(c.describe());
    const CaseInputs inputs = make_case_inputs(c);
    ASSERT_EQ(static_cast<int64_t>(inputs.index.size()), c.shape.src_rows);
    for (int64_t i = 0; i < c.shape.src_rows; ++i) {
      const int64_t value = inputs.index[static_cast<size_t>(i)];
      const bool bad = std::binary_search(c.bad_positions.begin(), c.bad_positions.end(), i);
      EXPECT_EQ(value < 0 || value >= c.shape.out_rows, bad) << "position " << i << " value " << value;
    }
    EXPECT_EQ(inputs.index_bytes.size(),
              inputs.index.size() * (type == SCATTERPTX_INDEX_INT32 ? 4 : 8));
  }
}

TEST(StressInputs, OutIsPoisonedWithNonZeroValuesAndPaddedRows) {
  const StressCase c = find_case([](const StressCase& s) {
    return s.shape.out_row_stride > s.shape.cols && s.shape.cols > 0 && s.shape.out_rows < 5000;
  });
  const CaseInputs inputs = make_case_inputs(c);
  for (int64_t r = 0; r < c.shape.out_rows; ++r) {
    for (int64_t col = 0; col < c.shape.cols; ++col) ASSERT_NE(inputs.out0.at(r, col), 0.0);
    const unsigned char* padding = inputs.out0.row(r) + c.shape.cols * c.shape.element_bytes();
    ASSERT_EQ(padding[0], scatterptx_test::kOutPaddingByte);
  }
  // Each call's values come from its own seed: the same shape in another
  // call starts from another poison.
  StressCase again = c;
  again.input_seed = make_case(11, c.call + 1).input_seed;
  EXPECT_NE(again.input_seed, c.input_seed);
  EXPECT_NE(make_case_inputs(again).out0.bytes, inputs.out0.bytes);
}

TEST(StressInputs, SortedAndHotPatterns) {
  const StressCase sorted = find_case([](const StressCase& s) {
    return s.pattern == IndexPattern::kSorted && s.bad_positions.empty() && s.shape.src_rows > 100;
  });
  const CaseInputs sorted_inputs = make_case_inputs(sorted);
  EXPECT_TRUE(std::is_sorted(sorted_inputs.index.begin(), sorted_inputs.index.end()));
  const StressCase hot = find_case([](const StressCase& s) {
    return s.pattern == IndexPattern::kHot && s.shape.src_rows > 1000 && s.shape.out_rows > 100;
  });
  const CaseInputs hot_inputs = make_case_inputs(hot);
  std::vector<int64_t> counts(static_cast<size_t>(hot.shape.out_rows), 0);
  for (int64_t target : hot_inputs.index) {
    if (target >= 0 && target < hot.shape.out_rows) ++counts[static_cast<size_t>(target)];
  }
  EXPECT_GT(*std::max_element(counts.begin(), counts.end()), hot.shape.src_rows / 5);
}

// out as a correct call leaves it: out0 plus `repeats` times each valid row,
// rounded once to the dtype; guards intact.
DownloadedOut simulate(const CaseInputs& inputs, int repeats) {
  DownloadedOut got;
  got.values = inputs.out0;
  const scatterptx_dtype dtype = inputs.out0.dtype;
  const size_t element = scatterptx_test::element_bytes(dtype);
  std::vector<double> sums(inputs.out0.bytes.size() / element, 0.0);
  for (int64_t r = 0; r < inputs.out0.rows; ++r) {
    for (int64_t c = 0; c < inputs.out0.cols; ++c) sums[r * inputs.out0.row_stride + c] = inputs.out0.at(r, c);
  }
  std::vector<bool> touched(static_cast<size_t>(inputs.out0.rows), false);
  for (size_t i = 0; i < inputs.index.size(); ++i) {
    const int64_t r = inputs.index[i];
    if (r < 0 || r >= inputs.out0.rows) continue;
    touched[static_cast<size_t>(r)] = true;
    for (int64_t c = 0; c < inputs.out0.cols; ++c) {
      sums[r * inputs.out0.row_stride + c] += repeats * inputs.src.at(static_cast<int64_t>(i), c);
    }
  }
  for (int64_t r = 0; r < inputs.out0.rows; ++r) {
    if (!touched[static_cast<size_t>(r)]) continue;
    for (int64_t c = 0; c < inputs.out0.cols; ++c) {
      scatterptx_test::store_element(dtype, got.values.row(r) + c * element, sums[r * inputs.out0.row_stride + c]);
    }
  }
  got.guard_before.assign(64, kGuardByte);
  got.guard_after.assign(64, kGuardByte);
  return got;
}

TEST(StressCheck, ACorrectResultPassesAndEachKindOfDamageFails) {
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64}) {
    const StressCase c = find_case([&](const StressCase& s) {
      return s.shape.dtype == dtype && !s.bad_positions.empty() && s.shape.src_rows < 3000 && s.shape.cols > 2 &&
             s.shape.out_rows < 3000 &&
             s.shape.out_row_stride > s.shape.cols;
    });
    SCOPED_TRACE(c.describe());
    const CaseInputs inputs = make_case_inputs(c);
    for (int repeats : {1, 3}) {
      const DownloadedOut good = simulate(inputs, repeats);
      EXPECT_EQ(check_result(inputs, good, repeats), "");
      EXPECT_NE(check_result(inputs, good, repeats + 1), "") << "a missing repeat must fail";
    }
    const DownloadedOut good = simulate(inputs, 1);
    const int64_t row = inputs.index[static_cast<size_t>(c.bad_positions[0] == 0 ? 1 : 0)];

    DownloadedOut damaged = good;
    scatterptx_test::store_element(dtype, damaged.values.row(row) + c.shape.element_bytes(),
                                   damaged.values.at(row, 1) + 1e4);  // beyond any bound here
    EXPECT_NE(check_result(inputs, damaged, 1), "");

    damaged = good;
    damaged.values.row(row)[c.shape.cols * c.shape.element_bytes()] ^= 1;  // padding
    EXPECT_NE(check_result(inputs, damaged, 1), "");

    damaged = good;
    damaged.guard_after[7] = 0;
    EXPECT_NE(check_result(inputs, damaged, 1).find("guard after"), std::string::npos);

    DownloadedOut untouched;
    untouched.values = inputs.out0;
    untouched.guard_before = good.guard_before;
    untouched.guard_after = good.guard_after;
    EXPECT_EQ(check_untouched(inputs, untouched), "");
    EXPECT_NE(check_untouched(inputs, good), "");
    EXPECT_EQ(check_identical(good, good), "");
    EXPECT_NE(check_identical(good, untouched), "");
  }
}

TEST(StressLedger, AgreesWithTakesThatSawEveryLaunch) {
  IndexLedger none;
  none.taken(-1);
  none.taken(-1);
  EXPECT_EQ(none.verdict(), "");

  IndexLedger split;  // two launches, their records taken by two takes
  split.expect({9, 40});
  split.expect({5});
  split.taken(9);
  split.taken(5);
  split.taken(-1);
  EXPECT_EQ(split.verdict(), "");
  EXPECT_EQ(split.takes(), 3);
  EXPECT_EQ(split.answers_with_position(), 2);
}

TEST(StressLedger, ALostRecordOrAStrayAnswerFails) {
  IndexLedger lost;
  lost.expect({9});
  lost.expect({5});
  lost.taken(9);
  lost.taken(-1);
  EXPECT_NE(lost.verdict().find("lost"), std::string::npos) << lost.verdict();

  IndexLedger stray;
  stray.expect({9});
  stray.taken(7);
  stray.taken(9);
  EXPECT_NE(stray.verdict().find("7"), std::string::npos) << stray.verdict();

  IndexLedger nothing_launched;
  nothing_launched.taken(0);
  EXPECT_NE(nothing_launched.verdict(), "");
}

TEST(StressMemory, ReadsRssFromStatm) {
  EXPECT_EQ(rss_bytes_from_statm("5000 1200 300 10 0 900 0", 4096), 1200 * 4096);
  EXPECT_EQ(rss_bytes_from_statm("", 4096), -1);
  EXPECT_EQ(rss_bytes_from_statm("12", 4096), -1);
  EXPECT_GT(current_rss_bytes(), 0);
}

TEST(StressMemory, GrowthBeyondTheSlackFailsPoolsAside) {
  const int64_t mib = int64_t{1} << 20;
  MemoryReading before;
  before.device_used_bytes = 1000 * mib;
  before.pool_reserved_bytes = 100 * mib;
  before.rss_bytes = 500 * mib;
  MemoryReading after = before;
  after.device_used_bytes += 60 * mib;
  after.rss_bytes += 60 * mib;
  EXPECT_EQ(memory_growth_verdict(before, after, 64, 64), "");

  after.device_used_bytes += 300 * mib;  // all of it the pools' reuse cache
  after.pool_reserved_bytes += 300 * mib;
  after.graph_reserved_bytes = 0;
  EXPECT_EQ(memory_growth_verdict(before, after, 64, 64), "");

  MemoryReading leaked = after;
  leaked.device_used_bytes += 10 * mib;
  EXPECT_NE(memory_growth_verdict(before, leaked, 64, 64).find("device memory"), std::string::npos);

  MemoryReading unreleased = after;
  unreleased.pool_used_bytes = 4096;
  EXPECT_NE(memory_growth_verdict(before, unreleased, 64, 64).find("still in use"), std::string::npos);

  MemoryReading fat = after;
  fat.rss_bytes += 10 * mib;
  EXPECT_NE(memory_growth_verdict(before, fat, 64, 64).find("RSS"), std::string::npos);
}

TEST(StressGate, ACaptureWaitsForCallsAndHoldsNewOnesBack) {
  CaptureGate gate;
  std::atomic<bool> capturing{false};
  std::atomic<bool> late_call_entered{false};
  gate.enter_call();
  std::thread capture([&] {
    GateCapture held(gate);
    capturing = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(late_call_entered.load()) << "a call entered during the capture";
    capturing = false;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(capturing.load()) << "the capture began while a call was in";
  std::thread late_call([&] {
    GateCall held(gate);
    late_call_entered = true;
    EXPECT_FALSE(capturing.load());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(late_call_entered.load()) << "a new call overtook the waiting capture";
  gate.leave_call();
  capture.join();
  late_call.join();
  EXPECT_TRUE(late_call_entered.load());
}

TEST(StressFailures, KeepTheFirstFewAndSayHowToReplayThem) {
  FailureLog log(2);
  log.add({12, "call 12 default", {"out mismatch"}});
  log.add({-1, "memory flatness", {"grew"}});
  log.add({30, "call 30 plan", {"x"}});
  EXPECT_EQ(log.count(), 3);
  ASSERT_EQ(log.first().size(), 2u);
  const std::string text = format_failure(log.first()[0], 99);
  EXPECT_NE(text.find("--seed 99 --replay 12"), std::string::npos) << text;
  EXPECT_EQ(format_failure(log.first()[1], 99).find("--replay"), std::string::npos);
}

}  // namespace
}  // namespace scatterptx_stress
