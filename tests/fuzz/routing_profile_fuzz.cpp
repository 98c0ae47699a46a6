// Routing profile folders: the input holds their five files in the order below, NUL-separated.
#include <filesystem>

#include "tests/fuzz/fuzz_input.hpp"
#include "workloads/routing_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  semsim::fuzz::fit_memory_budget_to_fuzzer();
  static const char* const files[] = {"profile.json", "tokens.tsv", "token_experts.tsv", "expert_load.csv",
                                      "coactivation.csv"};
  const std::vector<std::string> parts = semsim::fuzz::split_at_nul(semsim::fuzz::as_text(data, size), 5);
  std::filesystem::create_directories(semsim::fuzz::scratch_dir() + "/profile");
  for (std::size_t i = 0; i < parts.size(); ++i)
    semsim::fuzz::write_scratch_file(std::string("profile/") + files[i], parts[i]);
  semsim::fuzz::expect_only_input_errors(
      [&] { semsim::RoutingProfile::load(semsim::fuzz::scratch_dir() + "/profile"); });
  return 0;
}
