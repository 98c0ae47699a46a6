// Text routing traces (.semtrace.txt), gzip-compressed ones (.semtrace.txt.gz) when the input starts
// with the gzip magic bytes.
#include "tests/fuzz/fuzz_input.hpp"
#include "workloads/routing_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string path = semsim::fuzz::write_scratch_file(
      gzip ? "trace.semtrace.txt.gz" : "trace.semtrace.txt", semsim::fuzz::as_text(data, size));
  semsim::fuzz::expect_only_input_errors([&] { semsim::load_trace(path); });
  return 0;
}
