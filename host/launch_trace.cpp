#include "launch_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace scatterptx::detail {

LaunchTrace::LaunchTrace(const char* path) {
  if (path == nullptr || path[0] == '\0') return;
  fd_ = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) open_error_ = std::string("cannot open ") + path + ": " + std::strerror(errno);
}

LaunchTrace::~LaunchTrace() {
  if (fd_ >= 0) ::close(fd_);
}

void LaunchTrace::note_function(CUfunction function, const char* entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[function] = entry;
}

void LaunchTrace::record(CUfunction function) {
  std::string line;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = entries_.find(function);
    line = found != entries_.end() ? found->second : "?";
  }
  line += '\n';
  // Best effort: a trace that cannot be written must not fail the launch.
  (void)!::write(fd_, line.data(), line.size());
}

LaunchTrace& launch_trace() {
  // Never destroyed: launches from other threads' exit handlers still find it.
  static LaunchTrace* const trace = [] {
    auto* made = new LaunchTrace(std::getenv(kTraceLaunchesVariable));
    if (!made->open_error().empty()) {
      std::fprintf(stderr, "libscatterptx: %s: %s; launches are not traced\n", kTraceLaunchesVariable,
                   made->open_error().c_str());
    }
    return made;
  }();
  return *trace;
}

}  // namespace scatterptx::detail
