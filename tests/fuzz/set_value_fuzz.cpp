// `--set KEY=VALUE` overrides: each input line is one override applied to the default scenario.
#include <sstream>

#include "sim/scenario.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  static const std::string base = semsim::default_scenario_text();
  std::vector<std::string> overrides;
  std::istringstream lines{std::string(semsim::fuzz::as_text(data, size))};
  for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_scenario(base, "<default>", "", overrides); });
  return 0;
}
