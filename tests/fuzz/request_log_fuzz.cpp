// Request logs (workload.requests_from). The input's first line names the format (csv, mooncake or
// bench_serving; anything else reads as csv), the rest is the file.
#include <algorithm>

#include "tests/fuzz/fuzz_input.hpp"
#include "workloads/request_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  const auto [format_name, content] = semsim::fuzz::split_name_line(semsim::fuzz::as_text(data, size), "csv");
  const std::vector<std::string>& names = semsim::request_log_format_names();
  const auto named = std::find(names.begin(), names.end(), format_name);
  const auto format = static_cast<semsim::RequestLogFormat>(named == names.end() ? 0 : named - names.begin());
  const std::string path = semsim::fuzz::write_scratch_file("requests.log", content);
  semsim::fuzz::expect_only_input_errors([&] { semsim::read_request_log(path, format); });
  return 0;
}
