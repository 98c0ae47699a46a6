// Placement files (.semplace), and the same bytes as an SGLang expert-location JSON file imported
// for DeepSeek-V2-Lite on 8 GPUs.
#include "models/presets.hpp"
#include "policies/placement_file.hpp"
#include "policies/sglang_expert_location.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  static const semsim::MoeModel model = semsim::model_preset("deepseek-v2-lite");
  const std::string_view text = semsim::fuzz::as_text(data, size);
  const std::string path = semsim::fuzz::write_scratch_file("placement.semplace", text);
  semsim::fuzz::expect_only_input_errors([&] { semsim::read_placement_file(path); });
  semsim::fuzz::expect_only_input_errors(
      [&] { semsim::placement_from_sglang(text, "fuzz.json", model, 8, 8); });
  return 0;
}
