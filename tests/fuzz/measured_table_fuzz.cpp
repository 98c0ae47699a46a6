// Measured kernel tables. The input's first line names the file (its kind comes from the name:
// gemm_perf.csv, nccl_perf.csv, ...; a name ending in .log is an nccl-tests log), the rest is it.
#include "calibrate/import/aiconfigurator_tables.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const semsim::fuzz::NamedContent input =
      semsim::fuzz::split_name_line(semsim::fuzz::as_text(data, size), "table.csv");
  const std::string& name = input.name;
  const std::string path = semsim::fuzz::write_scratch_file(name, input.content);
  semsim::fuzz::expect_only_input_errors([&] {
    if (name.ends_with(".log")) {
      semsim::read_nccl_tests_log(path);
    } else {
      semsim::read_aiconfigurator_table(path);
    }
  });
  return 0;
}
