// A scatter problem laid into one device allocation whose every byte starts
// random (a fresh seed per test): guards between and around the tensors,
// the padding of out's rows and the room each region has beyond its
// tensor. After a call the whole allocation is read back and compared with
// what it held: only the bytes a call may legally write may differ (the
// out rows of valid indices, their columns only, and a caller's workspace
// where the call takes one), and those rows are checked against the float64
// reference. For the bad-input tests (docs/bad_inputs.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_test {

// Room for each region of a PoisonedScatter beyond what its shape needs, so
// that a case can stretch a tensor (more rows, a wider stride) without
// reaching the next one.
struct ArenaRoom {
  size_t out = 0;
  size_t src = 0;
  size_t index = 0;
};

class PoisonedScatter {
 public:
  // out holds random values in its columns and random bytes in its padding;
  // src and index are host's (src's padding NaN, so a read of it shows);
  // workspace_bytes of random bytes, 256-byte aligned, for calls that take
  // a caller's workspace (0: none).
  PoisonedScatter(const ScatterShape& shape, const HostScatter& host, size_t workspace_bytes, uint64_t seed,
                  ArenaRoom room = ArenaRoom());

  const ScatterShape& shape() const { return shape_; }
  const HostMatrix& src() const { return src_; }
  const std::vector<int64_t>& index() const { return index_; }
  // out as the last check left it: poisoned, then each checked call's sums.
  const HostMatrix& out0() const { return out0_; }

  void* out() const { return storage_.pointer(out_at_); }
  const void* src_pointer() const { return storage_.pointer(src_at_); }
  const void* index_pointer() const { return storage_.pointer(index_at_); }
  void* workspace() const { return workspace_bytes_ == 0 ? nullptr : storage_.pointer(workspace_at_); }
  size_t workspace_bytes() const { return workspace_bytes_; }
  scatterptx_scatter_add_args args(scatterptx_path path, scatterptx_index_check check) const;

  // Uploads a new index (a valid one for the follow-up call); what the
  // arena is expected to hold follows.
  void set_index(const std::vector<int64_t>& index);
  // Fresh random values in out's columns (its padding stays as it is).
  void repoison_out(uint64_t seed);

  // Reads the arena back and checks it against what it held: nothing may
  // differ outside out and (where workspace_may_change) the workspace; out
  // must hold out0() plus `repeats` times the rows of `index` whose entry
  // lies in [0, out_rows), bit-identical elsewhere (padding included).
  // Then takes what it read as what the arena holds. Failures are gtest
  // failures; returns false after one.
  bool expect_rows_added(const std::vector<int64_t>& index, int repeats, bool workspace_may_change);
  // The same with nothing added: out unchanged too.
  bool expect_unchanged(bool workspace_may_change);
  // Checks only the bytes outside out (and the workspace where allowed),
  // and takes out as it now is, whatever it holds: for a call whose sums
  // are unspecified but whose writes must stay inside out.
  bool expect_unchanged_outside_out(bool workspace_may_change);

 private:
  std::vector<unsigned char> read_back() const;
  // "" when image equals expected_ outside the skipped ranges, else where
  // the first difference is.
  std::string first_change(const std::vector<unsigned char>& image, bool skip_out, bool skip_workspace) const;
  void take(const std::vector<unsigned char>& image);

  ScatterShape shape_;
  HostMatrix src_;
  std::vector<int64_t> index_;
  HostMatrix out0_;
  size_t out_at_ = 0;
  size_t out_bytes_ = 0;
  size_t src_at_ = 0;
  size_t index_at_ = 0;
  size_t index_capacity_ = 0;
  size_t workspace_at_ = 0;
  size_t workspace_bytes_ = 0;
  DeviceBuffer storage_;
  std::vector<unsigned char> expected_;  // what the whole allocation should hold
};

}  // namespace scatterptx_test
