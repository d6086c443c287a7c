// An opt-in record of the kernels launched: with SCATTERPTX_TRACE_LAUNCHES=FILE
// in the environment, every launch appends its entry name and a newline to
// FILE, so that a test run shows which variants it launched
// (scripts/sanitize.sh compares them with the manifest). Off (unset or
// empty), a launch pays one untaken branch. Read once per process, at the
// first kernel load or launch.
#pragma once

#include <cuda.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace scatterptx::detail {

inline constexpr const char* kTraceLaunchesVariable = "SCATTERPTX_TRACE_LAUNCHES";

// The trace itself: a file opened for appending, or off. Each record is one
// write() of "entry\n" to a file opened with O_APPEND, so that the lines of
// several threads, or processes sharing the file, never interleave.
class LaunchTrace {
 public:
  // path: the variable's value; null or empty: off. A file that cannot be
  // opened leaves the trace off, with open_error() saying why.
  explicit LaunchTrace(const char* path);
  ~LaunchTrace();
  LaunchTrace(const LaunchTrace&) = delete;
  LaunchTrace& operator=(const LaunchTrace&) = delete;

  bool on() const { return fd_ >= 0; }
  const std::string& open_error() const { return open_error_; }

  // Which entry each loaded function is, for record().
  void note_function(CUfunction function, const char* entry);
  // Appends function's entry name ("?" for a function never noted).
  void record(CUfunction function);

 private:
  int fd_ = -1;
  std::string open_error_;
  std::mutex mutex_;
  std::unordered_map<CUfunction, const char*> entries_;
};

// The process's trace, from SCATTERPTX_TRACE_LAUNCHES at its first use; a
// file that cannot be opened is said once on stderr.
LaunchTrace& launch_trace();

// Where a kernel's function is looked up after loading its module.
inline void note_kernel_function(CUfunction function, const char* entry) {
  LaunchTrace& trace = launch_trace();
  if (trace.on()) trace.note_function(function, entry);
}

// Where a kernel is launched, just before the driver call (kernel_launch.cpp).
inline void trace_launch(CUfunction function) {
  LaunchTrace& trace = launch_trace();
  if (trace.on()) trace.record(function);
}

}  // namespace scatterptx::detail
