// Scenario YAML: load_scenario validates every section (presets, workload, policies, placement) of
// a document whose relative paths resolve against the scratch folder.
#include "sim/scenario.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/fuzz/yaml_mutator.hpp"

SEMSIM_FUZZ_YAML_MUTATOR

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const std::string text(semsim::fuzz::as_text(data, size));
  semsim::fuzz::expect_only_input_errors(
      [&] { semsim::load_scenario(text, "fuzz.yaml", semsim::fuzz::scratch_dir()); });
  return 0;
}
