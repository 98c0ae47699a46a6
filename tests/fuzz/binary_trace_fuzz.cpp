// Binary routing traces (.semtrace), which are memory-mapped: header sizes against the file.
#include "tests/fuzz/fuzz_input.hpp"
#include "workloads/routing_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const std::string path =
      semsim::fuzz::write_scratch_file("trace.semtrace", semsim::fuzz::as_text(data, size));
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_trace(path); });
  return 0;
}
