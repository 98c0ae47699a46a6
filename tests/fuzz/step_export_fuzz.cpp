// Step exports (`semsim run --export-steps`, read by `semsim live` and `semsim compare-live`), read
// and planned for replay on every rank they hold, as `semsim live` plans them.
#include "calibrate/replay/replay_plan.hpp"
#include "calibrate/replay/step_export.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const std::string path =
      semsim::fuzz::write_scratch_file("fuzz.semsim-steps", semsim::fuzz::as_text(data, size));
  semsim::fuzz::expect_only_input_errors([&] {
    const semsim::StepExport exported = semsim::read_step_export(path);
    for (const semsim::ExportedStep& step : exported.steps)
      for (int rank = 0; rank < exported.ranks; ++rank) semsim::plan_rank_step(exported, step, rank);
  });
  return 0;
}
