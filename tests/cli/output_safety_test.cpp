// No lost file: every output path is checked before the work (exit 2 naming its option), none may be
// an input or another output, a write that fails (a file size limit, a full stdout) is reported with
// nothing partial left, and an interrupted or failed command leaves no staging folder, temporary
// file or empty output folder behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

// A small scenario: 10 short requests on one 8-GPU node.
const std::string kScenario =
    "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n"
    "workload:\n  requests: 10\n  arrival: {process: fixed, rate: 100}\n"
    "  input_len: {dist: fixed, value: 64}\n  output_len: {dist: fixed, value: 4}\n";

std::string write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// Exit 2 with one error line holding every `expects`, nothing on stdout.
void expect_refused(const std::vector<std::string>& args, const CliResult& r,
                    const std::vector<std::string>& expects) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(split_lines(r.err).size(), 1u);
  for (const std::string& expect : expects) EXPECT_NE(r.err.find(expect), std::string::npos) << expect;
}

CliResult refused(const std::vector<std::string>& args, const std::vector<std::string>& expects) {
  const CliResult r = run_semsim(args);
  expect_refused(args, r, expects);
  return r;
}

TEST(cliOutputSafety, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  TempDir tmp;
  const std::string scenario = write(tmp.path() / "s.yaml", kScenario);
  for (const std::string option : {"--result-json", "--timeline", "--export-steps"}) {
    refused({"run", scenario, "--out", tmp / "out", option, scenario}, {option, "is also an input"});
    EXPECT_EQ(read_file(scenario), kScenario) << option;
  }
  // A file the scenario names is an input too.
  const std::string arrivals = write(tmp.path() / "arrivals.txt", "0\n0.01\n0.02\n");
  const std::string with_file =
      write(tmp.path() / "f.yaml",
            "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n"
            "workload:\n  requests: 3\n  arrival: {process: trace, file: arrivals.txt}\n"
            "  input_len: {dist: fixed, value: 64}\n  output_len: {dist: fixed, value: 4}\n");
  refused({"run", with_file, "--out", tmp / "out", "--result-json", arrivals},
          {"--result-json", "is also an input"});
  EXPECT_EQ(read_file(arrivals), "0\n0.01\n0.02\n");
  EXPECT_FALSE(fs::exists(tmp / "out"));

  // compare's --json onto a file of a folder it compares.
  for (const char* name : {"a", "b"}) {
    const std::vector<std::string> args{"run", scenario, "--out", tmp / name};
    ASSERT_EQ(run_semsim(args).exit_code, 0);
  }
  const std::string summary = read_file(tmp.path() / "a/summary.json");
  refused({"compare", tmp / "a", tmp / "b", "--json", tmp / "a/summary.json"}, {"--json", "input folder"});
  EXPECT_EQ(read_file(tmp.path() / "a/summary.json"), summary);

  // calibrate import's --out onto a table it imports.
  const std::string log = write(tmp.path() / "alltoall_perf.log", "# nccl-tests\n");
  refused({"calibrate", "import", "--from", "nccl-tests", log, "--device", "h200-sxm", "--out", log},
          {"--out", "is also an input"});
  EXPECT_EQ(read_file(log), "# nccl-tests\n");
}

TEST(cliOutputSafety, OutputsThatAreOneAnotherOrFoldersAreRefusedBeforeTheWork) {
  TempDir tmp;
  const std::string scenario = write(tmp.path() / "s.yaml", kScenario);
  refused({"run", scenario, "--out", tmp / "out", "--timeline", tmp / "out"}, {"--timeline", "--out"});
  refused(
      {"run", scenario, "--out", tmp / "out", "--timeline", tmp / "t.json", "--result-json", tmp / "t.json"},
      {"--result-json", "--timeline"});
  EXPECT_EQ(entries_under(tmp.path()), std::vector<std::string>{"s.yaml"}) << "nothing made, nothing left";
  fs::create_directory(tmp.path() / "out");
  refused({"run", scenario, "--out", tmp / "out", "--result-json", tmp / "out/r.json"},
          {"--result-json", "inside the output folder"});
  EXPECT_EQ(entries_under(tmp.path() / "out"), std::vector<std::string>{}) << "no staged file left";

  fs::create_directory(tmp.path() / "folder");
  refused({"compare", tmp / "x", tmp / "y", "--json", tmp / "folder"}, {"--json", "is a folder"});
  refused({"place", "--policy", "contiguous", "--profile", tmp / "no-profile", "--ep", "8", "--out",
           tmp / "folder"},
          {"--out", "is a folder"});
  // A pipe of the test's own, not a device: a semsim without this check replaces what it names.
  ASSERT_EQ(::mkfifo((tmp / "pipe").c_str(), 0600), 0);
  refused({"run", scenario, "--out", tmp / "o", "--result-json", tmp / "pipe"},
          {"--result-json", "not a plain file"});
  EXPECT_TRUE(fs::is_fifo(tmp.path() / "pipe"));
  refused({"run", scenario, "--out", tmp / "o", "--result-json", tmp / "missing/r.json"},
          {"--result-json", "no folder"});
  // Where no file can be made, even by root: found by making the staged file before the work.
  refused({"run", scenario, "--out", tmp / "o", "--result-json", "/proc/r.json"},
          {"--result-json", "cannot write"});
  refused({"run", scenario, "--out", "/proc/semsim-out"}, {"--out", "cannot create the output folder"});
  EXPECT_FALSE(fs::exists(tmp.path() / "o"));
}

TEST(cliOutputSafety, AWriteThatFailsIsReportedAndLeavesNothing) {
  TempDir tmp;
  // ulimit -f: the steps.csv of 2,000 requests is larger than 64 KiB; the write fails (EFBIG), it does
  // not kill the simulation with SIGXFSZ.
  const std::vector<std::string> args{"run",       "default",       "--out",
                                      tmp / "out", "--result-json", tmp / "r.json"};
  Launch limited;
  limited.file_size_bytes = 64 * 1024;
  RunningSemsim running = start_semsim(args, limited);
  const CliResult r = wait_for_semsim(running);
  expect_refused(args, r, {"cannot write", "File too large"});
  EXPECT_EQ(entries_under(tmp.path()), std::vector<std::string>{}) << "no folder, staging or temporary file";
}

TEST(cliOutputSafety, AFailedWriteToStdoutIsAnError) {
  TempDir tmp;
  const std::vector<std::vector<std::string>> commands{
      {"list", "models"},
      {"check", "default"},
      {"run", "default", "--set", "workload.requests=5", "--out", tmp / "out"},
      {"collective", "--model", "deepseek-v2-lite", "--cluster", "h200-1x8", "--ep", "8", "--tokens", "128",
       "--kernel", "normal", "--json"}};
  for (const auto& args : commands) {
    Launch full;
    full.stdout_path = "/dev/full";
    RunningSemsim running = start_semsim(args, full);
    const CliResult r = wait_for_semsim(running);
    SCOPED_TRACE(describe(args, r));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "error: cannot write to standard output: No space left on device\n");
  }
}

TEST(cliOutputSafety, AnErrorInTheSimulationLeavesNoOutputFolder) {
  TempDir tmp;
  // The window starts after the run's last step: found once the simulation has run.
  refused({"run", "default", "--set", "workload.requests=5", "--out", tmp / "a/out", "--timeline",
           tmp / "t.json", "--timeline-at", "1000"},
          {"--timeline-at"});
  EXPECT_EQ(entries_under(tmp.path()), std::vector<std::string>{})
      << "neither the folders made nor a staged file";
}

// SIGTERM, SIGINT and SIGHUP end a run as they would, after removing what it had staged.
TEST(cliOutputSafety, AnInterruptedRunLeavesNothing) {
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
    TempDir tmp;
    const fs::path out = tmp.path() / "out";
    const std::vector<std::string> args{
        "run",        "default",    "--set",         "workload.requests=100000",
        "--out",      out.string(), "--result-json", tmp / "r.json",
        "--progress", "never"};
    RunningSemsim running = start_semsim(args);
    // Interrupted while it simulates: its staging folder is there.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60 * kSlowdown);
    auto staging = [&] {
      for (const std::string& entry : entries_under(out))
        if (entry.starts_with(".staging-")) return true;
      return false;
    };
    while (!staging() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(staging());
    ::kill(running.pid, signal);
    const CliResult r = wait_for_semsim(running);
    SCOPED_TRACE(describe(args, r));
    EXPECT_EQ(r.exit_code, 128 + signal);
    EXPECT_NE(r.err.find("removed the outputs it had not finished"), std::string::npos);
    EXPECT_EQ(entries_under(tmp.path()), std::vector<std::string>{});
  }
}

// A sweep writes only into a folder of its own, as a run does; an output of its own that is not what
// it writes there (a folder named points.csv) is refused before anything is made.
TEST(cliOutputSafety, ASweepRefusesAFolderItDidNotWrite) {
  TempDir tmp;
  const std::string scenario = write(tmp.path() / "s.yaml", kScenario);
  const std::string sweep =
      write(tmp.path() / "sweep.yaml", "sweep: 1\nbase: s.yaml\naxes:\n  - workload.seed: [1, 2]\n");
  ASSERT_EQ(run_semsim({"run", scenario, "--out", tmp / "run"}).exit_code, 0);
  const std::vector<std::string> run_files = entries_under(tmp.path() / "run");
  ASSERT_EQ(run_semsim({"sweep", sweep, "-j", "1", "--out", tmp / "shard"}).exit_code, 0);
  const std::vector<std::vector<std::string>> into_the_run{
      {"sweep", sweep, "-j", "1", "--out", tmp / "run"},
      {"sweep", sweep, "-j", "1", "--out", tmp / "run", "--force"},
      {"sweep", "merge", sweep, "--out", tmp / "run", tmp / "shard"}};
  for (const std::vector<std::string>& args : into_the_run) {
    refused(args, {"--out", "which semsim did not write"});
    EXPECT_EQ(entries_under(tmp.path() / "run"), run_files);
  }

  for (const std::string name : {"points.csv", ".lock"}) {
    const fs::path out = tmp.path() / ("bad" + name);
    fs::create_directories(out / name);
    refused({"sweep", sweep, "-j", "1", "--out", out.string()}, {"--out", "a folder '" + name + "'"});
    EXPECT_EQ(entries_under(out), std::vector<std::string>{name + "/"}) << "no .lock, points/ or temporary";
  }
}

}  // namespace
}  // namespace semsim::cli_test
