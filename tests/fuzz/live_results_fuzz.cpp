// A live replay's steps.csv (`semsim live`, calibrate/live/README.md) compared with its export, as
// `semsim compare-live` reads it: the export is the committed two-rank fixture, the input the CSV.
#include <filesystem>

#include "sim/outputs/live_comparison.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tests/step_export_fixture.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  static const semsim::StepExport exported = semsim::test::two_rank_export();
  const std::string csv = semsim::fuzz::write_scratch_file("steps.csv", semsim::fuzz::as_text(data, size));
  const std::string live_dir = std::filesystem::path(csv).parent_path().string();
  semsim::fuzz::expect_only_input_errors([&] { semsim::compare_live({{exported, live_dir}}); });
  return 0;
}
