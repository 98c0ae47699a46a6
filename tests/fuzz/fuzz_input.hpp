#pragma once
// What every fuzz target shares. The readers under test take paths (formats are chosen by file
// name, binary traces are memory-mapped), so an input reaches them as a file in this process's
// scratch folder. The contract fuzzed is the CLI's: bad input is an InputError (exit 2 with one
// message); any other exception escapes LLVMFuzzerTestOneInput and libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/input_error.hpp"

namespace semsim::fuzz {

// The scratch folder (created on first use, removed when the process exits).
const std::string& scratch_dir();

// Writes `bytes` to scratch_dir()/name and returns its path.
std::string write_scratch_file(const std::string& name, std::string_view bytes);

// The input as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input cut at NUL bytes into exactly `parts` texts (missing ones empty, the rest joined into
// the last): how targets whose format is several files (a routing profile folder) take one input.
std::vector<std::string> split_at_nul(std::string_view input, std::size_t parts);

// The input's first line, when it is a plain file name (letters, digits, '_', '-', '.'; else
// `fallback`), and the rest: how targets whose reader goes by the file name take one input.
struct NamedContent {
  std::string name;
  std::string_view content;
};
NamedContent split_name_line(std::string_view input, const std::string& fallback);

// Runs `read` on bad input's terms: an InputError is the right answer and is swallowed.
template <class Read>
void expect_only_input_errors(Read&& read) {
  try {
    read();
  } catch (const InputError&) {
  }
}

// Lowers the memory the checks of memory_budget.hpp allow to what libFuzzer lets one input allocate
// (its -malloc_limit_mb, 2 GB by default), so a count the checks accept is one the run can afford.
void fit_memory_budget_to_fuzzer();

}  // namespace semsim::fuzz
