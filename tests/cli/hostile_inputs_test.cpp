// Hostile and extreme inputs end to end, beyond the scenario corpus (bad_scenarios_test.cpp): each
// was found crashing, hanging, exhausting memory or exiting 1, and must now exit 2 with one clear
// error and no outputs, or (inside a sweep) fail its point with that error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

void expect_hostile_input_refused(const std::vector<std::string>& args, const CliResult& r,
                                  const std::string& message) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(split_lines(r.err).size(), 1u);
  EXPECT_NE(r.err.find(message), std::string::npos);
}

// profile.json's counts size dense tables: a vocabulary of 1e15 is refused by its limit, and
// counts within their limits whose tables cannot fit (1024 layers x 32767^2 co-activation counts)
// by the memory check, before anything is allocated.
TEST(cliHostileInputs, RoutingProfileWhoseTablesCannotFit) {
  TempDir tmp;
  auto profile = [&](const std::string& name, int layers, int experts, const std::string& vocabulary) {
    fs::create_directories(tmp / name);
    std::ofstream(tmp / (name + "/profile.json"))
        << R"({"format": "semsim-routing-profile", "version": 1, "moe_layers": )" << layers
        << R"(, "experts": )" << experts << R"(, "top_k": 2, "vocabulary": )" << vocabulary
        << R"(, "identified_occurrences": 0})";
    return std::vector<std::string>{"check", "default", "--set", "profile=" + tmp / name};
  };
  const auto huge_vocabulary = profile("vocabulary", 26, 64, "1000000000000000");
  expect_hostile_input_refused(
      huge_vocabulary, run_semsim(huge_vocabulary),
      "impossible counts: 26 MoE layers, 64 experts, top-2, vocabulary 1000000000000000");
  const auto huge_tables = profile("tables", 1024, 32767, "10");
  expect_hostile_input_refused(huge_tables, run_semsim(huge_tables), "GB of memory, more than the");
}

// A calibration query far outside the measured grid (calibration.extrapolate: false) is bad input:
// one line and exit 2 from `run`, and a failed point with that message in a sweep (it used to be a
// SimGrid backtrace, and "died with signal 6" in a sweep).
TEST(cliHostileInputs, CalibrationQueryOutsideTheMeasuredGrid) {
  TempDir tmp;
  const std::vector<std::string> values{"--set", "workload.requests=3",
                                        "--set", "calibration={profile: measured, extrapolate: false}",
                                        "--set", "workload.output_len.value=2"};
  std::vector<std::string> run{"run",       "default", "--out",
                               tmp / "out", "--set",   "workload.input_len.value=200000"};
  run.insert(run.end(), values.begin(), values.end());
  const CliResult refused = run_semsim(run);
  expect_hostile_input_refused(run, refused, "calibration profile 'h200-sxm-measured': mla_prefill");
  // Named at the scenario key that asked, with the profile's file and where the value was given.
  EXPECT_NE(refused.err.find("<default>:"), std::string::npos) << refused.err;
  // The profile's file at the line of the table that refused (it was the file alone).
  std::smatch at;
  ASSERT_TRUE(std::regex_search(
      refused.err, at,
      std::regex(": workload.input_len: this value asks the calibration profile "
                 R"(\(calibrate/profiles/h200-sxm-measured\.yaml:([0-9]+) \(embedded\)\))")))
      << refused.err;
  std::ifstream profile(fs::path(SEMSIM_SOURCE_DIR) / "calibrate/profiles/h200-sxm-measured.yaml");
  std::string line;
  for (int n = std::stoi(at[1]); n > 0; --n) std::getline(profile, line);
  EXPECT_EQ(line, "  - kernel: mla_prefill") << refused.err;
  EXPECT_NE(refused.err.find("(value set by --set workload.input_len.value=200000)"), std::string::npos)
      << refused.err;
  EXPECT_EQ(entries_under(tmp / "out"), std::vector<std::string>{});
  // In a scenario file, at its line.
  std::ofstream(tmp / "long-prompts.yaml")
      << "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n"
         "workload:\n  requests: 3\n  arrival: {process: fixed, rate: 100}\n"
         "  input_len: {dist: fixed, value: 200000}\n  output_len: {dist: fixed, value: 2}\n";
  const std::vector<std::string> from_file{"run", tmp / "long-prompts.yaml", "--out", tmp / "out"};
  const CliResult located = run_semsim(from_file);
  expect_hostile_input_refused(from_file, located,
                               tmp / "long-prompts.yaml:8:14: workload.input_len: this value asks");

  std::ofstream(tmp / "sweep.yaml")
      << "sweep: 1\nbase: default\nset: {workload.requests: 3, calibration: {profile: measured, extrapolate: "
         "false}, workload.output_len.value: 2}\naxes:\n  - workload.input_len.value: [100, 200000]\n";
  const std::vector<std::string> sweep{"sweep", tmp / "sweep.yaml", "--out", tmp / "sweep"};
  const CliResult r = run_semsim(sweep);
  ASSERT_EQ(r.exit_code, 0) << describe(sweep, r);
  const auto rows = split_lines(read_file(tmp / "sweep/points.csv"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[1].find(",ok,"), std::string::npos) << rows[1];
  EXPECT_NE(rows[2].find(",failed,"), std::string::npos) << rows[2];
  EXPECT_NE(rows[2].find("calibration profile 'h200-sxm-measured'"), std::string::npos) << rows[2];
  EXPECT_EQ(rows[2].find("signal"), std::string::npos) << rows[2];
}

// Counts within their limits can still need more memory than the machine allows: under a 1.5 GB
// address-space limit, a run of 10M requests and a sweep of 100,000 points are refused with what
// they need, before allocating it, while the default scenario still passes.
TEST(cliHostileInputs, MemoryNeedsBeyondTheLimitAreRefusedBeforeAllocating) {
  if (kAddressSanitizer) GTEST_SKIP() << "an address-space limit stops AddressSanitizer from starting";
  constexpr rlim_t kLimit = 1500ull << 20;
  const std::vector<std::string> fits{"check", "default"};
  EXPECT_EQ(run_semsim(fits, "", 120, kLimit).exit_code, 0);
  const std::vector<std::string> run{"check", "default", "--set", "workload.requests=10000000"};
  expect_hostile_input_refused(
      run, run_semsim(run, "", 120, kLimit),
      "workload.requests: a run of 10000000 requests (~2.56e+09 output tokens, at least 1.25e+06 steps) "
      "needs at least 2.55 GB of memory");

  TempDir tmp;
  std::ofstream sweep_file(tmp / "sweep.yaml");
  sweep_file << "sweep: 1\nbase: default\naxes:\n  - workload.seed: [";
  for (int i = 0; i < 1000; ++i) sweep_file << (i ? ", " : "") << i;
  sweep_file << "]\n  - workload.requests: [";
  for (int i = 1; i <= 100; ++i) sweep_file << (i > 1 ? ", " : "") << i;
  sweep_file << "]\n";
  sweep_file.close();
  const std::vector<std::string> sweep{"sweep", tmp / "sweep.yaml", "--dry-run"};
  expect_hostile_input_refused(sweep, run_semsim(sweep, "", 120, kLimit),
                               "the sweep's 100000 validated points needs at least 5 GB of memory");

  // DeepSeek-V3 at EP16384 on 2,048 H800 nodes: what grows with the square of the EP group (a route
  // per pair of devices, a matrix of dispatch copies per MoE layer) is refused at the EP size, as it
  // is in `collective`; it died of bad_alloc.
  const std::vector<std::string> ep16384{"check",   "default",
                                         "--set",   "model=deepseek-v3",
                                         "--set",   "cluster=h800-ib",
                                         "--nodes", "2048",
                                         "--set",   "parallelism.ep=16384",
                                         "--set",   "policies.placement={name: contiguous, redundant: 16128}",
                                         "--set",   "calibration=datasheet"};
  expect_hostile_input_refused(
      ep16384, run_semsim(ep16384, "", 120, kLimit),
      "parallelism.ep: an EP group of 16384 devices (2.684e+08 device pairs: their routes and the "
      "dispatch copies of each of 58 MoE layers) needs at least");
  const std::vector<std::string> collective{
      "collective", "--model", "deepseek-v3", "--cluster", "h800-ib",  "--nodes", "2048",
      "--ep",       "16384",   "--redundant", "16128",     "--tokens", "1"};
  expect_hostile_input_refused(
      collective, run_semsim(collective, "", 120, kLimit),
      "the routes between every two of 16384 devices (2.684e+08 pairs) needs at least");
}

// 16 requests on 28 GB200 NVL72 racks at EP2016: each step's all-to-alls visit 4 million device
// pairs in each of 58 MoE layers, minutes of work that ran without a word under a growing ETA. Refused
// before the run starts, at the EP size, with the work and how to allow it (--work-limit 0).
TEST(cliHostileInputs, AllToAllWorkBeyondTheLimitIsRefusedBeforeTheRun) {
  TempDir tmp;
  std::vector<std::string> gb200{"run",   "default",
                                 "--set", "model=deepseek-v3",
                                 "--set", "cluster={preset: gb200-nvl72, nodes: 28}",
                                 "--set", "parallelism.ep=2016",
                                 "--set", "workload.requests=16",
                                 "--set", "policies.placement={name: contiguous, redundant: 1760}",
                                 "--set", "calibration=datasheet",
                                 "--out", tmp / "out"};
  const CliResult r = run_semsim(gb200, "", 60);
  expect_hostile_input_refused(
      gb200, r,
      "parallelism.ep: EP2016 prices each step's dispatch and combine over 4.06e+06 device pairs in "
      "each of 58 MoE layers: at least 256 steps make 1.21e+11 pair visits, about 12 min of work, "
      "beyond --work-limit 1e+10");
  EXPECT_NE(r.err.find("pass --work-limit 0 (no limit)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
  // Allowed, it starts: `check` plans the run without simulating it.
  gb200[0] = "check";
  gb200.resize(gb200.size() - 2);
  gb200.insert(gb200.end(), {"--work-limit", "0"});
  EXPECT_EQ(run_semsim(gb200, "", 120).exit_code, 0) << describe(gb200, run_semsim(gb200, "", 120));
  // The limit reaches each pool of a disaggregated scenario, planned as a run of its own.
  const std::vector<std::string> pools{
      "check",        "default",
      "--set",        "cluster={preset: h200-ib, nodes: 3}",
      "--set",        "calibration=datasheet",
      "--set",        "disaggregation={prefill: {nodes: 1}, decode: {nodes: 2, set: {parallelism.ep: 16}}}",
      "--work-limit", "1"};
  expect_hostile_input_refused(pools, run_semsim(pools),
                               "parallelism.ep: EP8 prices each step's dispatch and combine");
}

}  // namespace
}  // namespace semsim::cli_test
