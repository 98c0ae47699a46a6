// Calibration profiles (YAML, format 2) for an H200.
#include "calibrate/format/profile.hpp"
#include "models/presets.hpp"
#include "models/yaml_input.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/fuzz/yaml_mutator.hpp"

SEMSIM_FUZZ_YAML_MUTATOR

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  static const semsim::Device device = semsim::cluster_preset("h200-1x8").device;
  const std::string text(semsim::fuzz::as_text(data, size));
  semsim::fuzz::expect_only_input_errors(
      [&] { semsim::CalibrationProfile::from_yaml(semsim::YamlInput::parse(text, "profile.yaml"), device); });
  return 0;
}
