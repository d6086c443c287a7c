// Runs every host case of the bad-input matrix (bad_inputs.hpp) through the
// C ABI and prints what each entry point answered, with the documented
// device cases, as JSON lines for scripts/bad_inputs_doc.py, which renders
// docs/bad_inputs.md. Needs no GPU: every host case is answered before the
// driver is touched (the pointers are fake and far apart), and this program
// never makes a context current.
//
// Exits 1, saying why on stderr, when an answer is not the documented one,
// or when what the environment lets it check of a documented case (no
// driver, no context) does not hold.
#include <cstdio>
#include <string>
#include <vector>

#include "bad_inputs.hpp"

namespace {

using namespace scatterptx_bad_inputs;

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : ", ") + json_string(items[i]);
  return out + "]";
}

struct Row {
  std::vector<std::string> entries;
  std::string result;
  std::string message;
};

void print_row(const char* section, const std::string& id, const std::string& input,
               const std::vector<std::string>& entries, const std::string& result, const std::string& message,
               const std::vector<std::string>& tests, const std::string& note) {
  std::printf("{\"section\": %s, \"id\": %s, \"input\": %s, \"entries\": %s, \"result\": %s, \"message\": %s, "
              "\"tests\": %s, \"note\": %s}\n",
              json_string(section).c_str(), json_string(id).c_str(), json_string(input).c_str(),
              json_list(entries).c_str(), json_string(result).c_str(), json_string(message).c_str(),
              json_list(tests).c_str(), json_string(note).c_str());
}

// Runs a host case through each of its entry points; entry points answering
// alike share a row. false when an answer is not the documented one.
bool print_host_case(const HostCase& c) {
  bool ok = true;
  std::vector<Row> rows;
  Call call = fake_baseline_call();
  c.spoil(call);
  for (const Entry entry : c.entries) {
    const Outcome outcome = run_entry(entry, call);
    const std::string mismatch = outcome_mismatch(c, entry, outcome);
    if (!mismatch.empty()) {
      std::fprintf(stderr, "%s, %s: %s\n", c.id.c_str(), entry_name(entry), mismatch.c_str());
      ok = false;
    }
    const std::string result = outcome.result(entry);
    bool joined = false;
    for (Row& row : rows) {
      if (row.result == result && row.message == outcome.message) {
        row.entries.push_back(entry_name(entry));
        joined = true;
      }
    }
    if (!joined) rows.push_back(Row{{entry_name(entry)}, result, outcome.message});
  }
  for (const Row& row : rows) {
    print_row("host", c.id, c.input, row.entries, row.result, row.message,
              {host_case_host_test(c), host_case_gpu_test(c)}, "");
  }
  return ok;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// What this machine lets the program check of a documented case.
bool verify(const DocumentedCase& c) {
  if (c.verify == Verify::kNo) return true;
  const scatterptx_status status = scatterptx_prepare();
  const std::string message = scatterptx_last_error_message();
  if (c.verify == Verify::kWithoutDriver && status == SCATTERPTX_ERROR_NO_DRIVER) {
    for (const char* prefix : {"no CUDA driver: dlopen(\"libcuda.so.1\") failed: ", "CUDA driver too old: ",
                               "CUDA driver lacks ", "no usable CUDA driver: "}) {
      if (starts_with(message, prefix)) return true;
    }
    std::fprintf(stderr, "%s: the message \"%s\" is not a documented one\n", c.id.c_str(), message.c_str());
    return false;
  }
  if (c.verify == Verify::kWithoutContext && status == SCATTERPTX_ERROR_NO_CONTEXT && message != c.message) {
    std::fprintf(stderr, "%s: the message is \"%s\", not \"%s\"\n", c.id.c_str(), message.c_str(), c.message.c_str());
    return false;
  }
  return true;
}

}  // namespace

int main() {
  bool ok = true;
  for (const HostCase& c : host_cases()) ok = print_host_case(c) && ok;
  for (const DocumentedCase& c : device_cases()) {
    ok = verify(c) && ok;
    print_row("device", c.id, c.input, {c.entries}, c.result, c.message, c.tests, c.note);
  }
  for (const DocumentedCase& c : undetected_cases()) {
    print_row("undetected", c.id, c.input, {c.entries}, c.result, c.message, c.tests, c.note);
  }
  return ok ? 0 : 1;
}
