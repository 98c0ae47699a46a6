// Model, device and cluster files (the YAML a scenario's `model:` or `cluster:`, or a cluster's
// `device:`, may name instead of a preset): the document is read as each.
#include "models/presets.hpp"
#include "models/yaml_input.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/fuzz/yaml_mutator.hpp"

SEMSIM_FUZZ_YAML_MUTATOR

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const std::string path = semsim::fuzz::write_scratch_file("preset.yaml", semsim::fuzz::as_text(data, size));
  const semsim::YamlInput reference = semsim::YamlInput::parse("file: " + path + "\n", "ref.yaml");
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_model(reference.required("file"), ""); });
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_device(reference.required("file"), ""); });
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_cluster(reference.required("file"), ""); });
  return 0;
}
