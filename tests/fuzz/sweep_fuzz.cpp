// Sweep files: load_sweep reads, validates and expands them (every point a validated scenario).
#include "sim/runs/sweep_file.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/fuzz/yaml_mutator.hpp"

SEMSIM_FUZZ_YAML_MUTATOR

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const std::string path = semsim::fuzz::write_scratch_file("sweep.yaml", semsim::fuzz::as_text(data, size));
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_sweep(path); });
  return 0;
}
