// Host-only: every host case of the bad-input matrix (bad_inputs.hpp), each
// row of docs/bad_inputs.md's first table, answers as documented at each of
// its entry points, before the driver is touched: the status, a message
// naming what is wrong, and no plan handed out. The pointers are fake; no
// entry point dereferences them before refusing.
#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>

#include "bad_inputs.hpp"

namespace scatterptx_bad_inputs {

namespace {

class BadInputOnHost : public ::testing::TestWithParam<HostCase> {};

TEST_P(BadInputOnHost, AnsweredAsDocumented) {
  const HostCase& c = GetParam();
  Call call = fake_baseline_call();
  c.spoil(call);
  for (const Entry entry : c.entries) {
    SCOPED_TRACE(entry_name(entry));
    EXPECT_EQ(outcome_mismatch(c, entry, run_entry(entry, call)), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, BadInputOnHost, ::testing::ValuesIn(host_cases()),
                         [](const ::testing::TestParamInfo<HostCase>& info) { return info.param.id; });

TEST(BadInputMatrix, IdsAreUniqueAndDocumentedCasesNameTests) {
  std::set<std::string> ids;
  for (const HostCase& c : host_cases()) EXPECT_TRUE(ids.insert(c.id).second) << c.id;
  for (const DocumentedCase& c : device_cases()) {
    EXPECT_TRUE(ids.insert(c.id).second) << c.id;
    EXPECT_FALSE(c.tests.empty()) << c.id << " reaches the device: a test must show it";
  }
  for (const DocumentedCase& c : undetected_cases()) EXPECT_TRUE(ids.insert(c.id).second) << c.id;
}

}  // namespace
}  // namespace scatterptx_bad_inputs
