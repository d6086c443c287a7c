// Host-only: the launch trace (SCATTERPTX_TRACE_LAUNCHES). Off without a
// path; on, one whole "entry\n" line appended per launch, the entry found
// from the function noted when its module was loaded; several writers on
// one file (threads, or the processes of a sharded run) never split a line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "launch_trace.hpp"

namespace {

using scatterptx::detail::launch_trace;
using scatterptx::detail::LaunchTrace;

CUfunction fake_function(std::uintptr_t n) { return reinterpret_cast<CUfunction>(0x1000 + n); }

// A path of its own under the test's temporary directory, removed first.
std::string fresh_path(const std::string& name) {
  const std::string path = ::testing::TempDir() + "scatterptx_launch_trace_" + name + "_" +
                           std::to_string(static_cast<long>(getpid()));
  std::remove(path.c_str());
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(LaunchTrace, OffWithoutAPath) {
  const LaunchTrace unset(nullptr);
  EXPECT_FALSE(unset.on());
  EXPECT_EQ(unset.open_error(), "");
  const LaunchTrace empty("");
  EXPECT_FALSE(empty.on());
  EXPECT_EQ(empty.open_error(), "");
}

TEST(LaunchTrace, AppendsOneLinePerLaunchAfterWhatTheFileHeld) {
  const std::string path = fresh_path("append");
  std::ofstream(path) << "earlier_entry\n";
  {
    LaunchTrace trace(path.c_str());
    ASSERT_TRUE(trace.on()) << trace.open_error();
    trace.note_function(fake_function(1), "row_red_vec16_f32_i32");
    trace.note_function(fake_function(2), "group_scan");
    trace.record(fake_function(1));
    trace.record(fake_function(2));
    trace.record(fake_function(1));
    trace.record(fake_function(3));  // never noted
  }
  EXPECT_EQ(read_file(path), "earlier_entry\nrow_red_vec16_f32_i32\ngroup_scan\nrow_red_vec16_f32_i32\n?\n");
  std::remove(path.c_str());
}

TEST(LaunchTrace, AFunctionNotedAgainTakesItsNewEntry) {
  // A failed context creation unloads its modules; the driver may hand the
  // same handle to another kernel afterwards.
  const std::string path = fresh_path("renote");
  {
    LaunchTrace trace(path.c_str());
    ASSERT_TRUE(trace.on()) << trace.open_error();
    trace.note_function(fake_function(1), "group_scan");
    trace.note_function(fake_function(1), "index_record_take");
    trace.record(fake_function(1));
  }
  EXPECT_EQ(read_file(path), "index_record_take\n");
  std::remove(path.c_str());
}

TEST(LaunchTrace, AFileThatCannotBeOpenedLeavesItOffAndSaysWhy) {
  const LaunchTrace trace("/nonexistent-directory-of-scatterptx/trace.txt");
  EXPECT_FALSE(trace.on());
  EXPECT_NE(trace.open_error().find("/nonexistent-directory-of-scatterptx/trace.txt"), std::string::npos)
      << trace.open_error();
}

TEST(LaunchTrace, WritersSharingAFileNeverSplitALine) {
  const std::string path = fresh_path("shared");
  constexpr int kWriters = 4;
  constexpr int kRecordsEach = 2000;
  const char* entries[kWriters] = {"row_tma_reduce_bf16_i64", "group_segment_sum_vec16_f32", "row_private_f16_i32",
                                   "index_record_take"};
  {
    // Two traces on one file, as two processes would have, each written by two threads.
    LaunchTrace first(path.c_str());
    LaunchTrace second(path.c_str());
    ASSERT_TRUE(first.on() && second.on());
    for (int w = 0; w < kWriters; ++w) {
      (w % 2 == 0 ? first : second).note_function(fake_function(static_cast<std::uintptr_t>(w)), entries[w]);
    }
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        LaunchTrace& trace = w % 2 == 0 ? first : second;
        for (int i = 0; i < kRecordsEach; ++i) trace.record(fake_function(static_cast<std::uintptr_t>(w)));
      });
    }
    for (std::thread& writer : writers) writer.join();
  }
  std::map<std::string, int> counts;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) ++counts[line];
  ASSERT_EQ(counts.size(), static_cast<std::size_t>(kWriters));
  for (const char* entry : entries) EXPECT_EQ(counts[entry], kRecordsEach) << entry;
  std::remove(path.c_str());
}

TEST(LaunchTrace, TheProcessTraceFollowsTheEnvironment) {
  const char* path = std::getenv("SCATTERPTX_TRACE_LAUNCHES");
  const bool asked = path != nullptr && path[0] != '\0';
  EXPECT_EQ(launch_trace().on(), asked && launch_trace().open_error().empty());
  if (!asked) EXPECT_EQ(launch_trace().open_error(), "");
}

}  // namespace
