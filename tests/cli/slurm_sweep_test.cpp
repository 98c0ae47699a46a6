// scripts/slurm-sweep against a stand-in sbatch that runs each job at once (array tasks one after
// another): the array covers every shard (throttled when asked), the merge depends on the array, the
// logs are named by job id, and the merged points.csv equals an unsharded run's. Then `semsim sweep`
// taking its shard from a Slurm array task's environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

// Logs its arguments, runs the job script (each array index in turn, whatever the %N throttle) with
// its output in the script's --output file (%A, %a and %j filled in), prints a job id.
constexpr const char* kFakeSbatch = R"(#!/usr/bin/env bash
set -euo pipefail
echo "sbatch $*" >>"$SBATCH_LOG"
array="" script=""
for arg in "$@"; do
  case "$arg" in --array=*) array=${arg#--array=} ;; -*) ;; *) script=$arg ;; esac
done
output=$(sed -n 's/^#SBATCH --output=//p' "$script")
if [[ -n $array ]]; then
  range=${array%\%*}
  for ((i = ${range%-*}; i <= ${range#*-}; i++)); do
    log=${output//\%A/4242}
    SLURM_ARRAY_TASK_ID=$i bash "$script" >"${log//\%a/$i}" 2>&1
  done
  echo "4242;cluster"
else
  bash "$script" >"${output//\%j/4243}" 2>&1
  echo "4243"
fi
)";

// The datasheet profile: what is tested does not depend on the calibration, and reading the
// measured one costs each point 0.7 s.
constexpr const char* kSixPoints =
    "sweep: 1\nbase: default\nset: {workload.requests: 8, calibration: datasheet}\n"
    "axes:\n  - workload.arrival.rate: [5, 10, 20]\n  - workload.seed: [1, 2]\n";

// The shell command running scripts/slurm-sweep with `options` (and `sbatch_options` after `--`) against
// the stand-in sbatch in tmp/bin, its output in tmp/stdout.
std::string slurm_sweep_command(const TempDir& tmp, const std::string& options,
                                const std::string& sbatch_options = "") {
  fs::create_directories(tmp / "bin");
  std::ofstream(tmp / "bin/sbatch") << kFakeSbatch;
  fs::permissions(tmp / "bin/sbatch", fs::perms::owner_all);
  return "PATH=" + tmp / "bin" + ":$PATH SBATCH_LOG=" + tmp / "sbatch.log" + " " + SEMSIM_SOURCE_DIR +
         "/scripts/slurm-sweep " + options + " --out " + tmp / "out" + " --semsim " + SEMSIM_BINARY +
         (sbatch_options.empty() ? "" : " -- " + sbatch_options) + " > " + tmp / "stdout" + " 2>&1";
}

TEST(cliSlurmSweep, SubmitsAnArrayOverShardsThenAMergeThatEqualsAnUnshardedRun) {
  TempDir tmp;
  const std::string sweep_file = tmp / "sweep.yaml";
  std::ofstream(sweep_file) << kSixPoints;
  const std::string command = slurm_sweep_command(tmp, sweep_file + " --shards 4", "--partition=cpu");
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file(tmp / "stdout") << read_file(tmp / "sbatch.log");
  const std::string said = read_file(tmp / "stdout");
  EXPECT_NE(said.find("array job 4242 (tasks 0-3) and the merge as job 4243"), std::string::npos) << said;

  const std::string log = read_file(tmp / "sbatch.log");
  EXPECT_NE(log.find("sbatch --parsable --array=0-3 --partition=cpu " + tmp / "out/slurm/shard.sbatch"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("sbatch --parsable --dependency=afterany:4242 --partition=cpu " +
                     tmp / "out/slurm/merge.sbatch"),
            std::string::npos)
      << log;
  // Logs by array job and task, the merge's by its job id.
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(fs::exists(tmp / ("out/shards/" + std::to_string(i) + "/points.csv"))) << i;
    EXPECT_NE(read_file(tmp / ("out/slurm/shard-4242_" + std::to_string(i) + ".log"))
                  .find("points in shard " + std::to_string(i) + "/4:"),
              std::string::npos)
        << i;
  }
  EXPECT_NE(read_file(tmp / "out/slurm/merge-4243.log").find("merged 6 of 6 points from 4 shard folders"),
            std::string::npos)
      << read_file(tmp / "out/slurm/merge-4243.log");
  EXPECT_NE(said.find("logs in " + tmp / "out/slurm/ (shard-4242_TASK.log, merge-4243.log)"),
            std::string::npos)
      << said;

  const CliResult whole = run_semsim({"sweep", sweep_file, "--out", tmp / "whole"});
  ASSERT_EQ(whole.exit_code, 0) << describe({"sweep"}, whole);
  EXPECT_EQ(read_file(fs::path(tmp / "out") / "points.csv"),
            read_file(fs::path(tmp / "whole") / "points.csv"));
}

TEST(cliSlurmSweep, ThrottleLimitsTheTasksRunningAtOnce) {
  TempDir tmp;
  const std::string sweep_file = tmp / "sweep.yaml";
  std::ofstream(sweep_file)
      << "sweep: 1\nbase: default\nset: {workload.requests: 4, calibration: datasheet}\n"
         "axes:\n  - workload.seed: [1, 2, 3]\n";
  const std::string command = slurm_sweep_command(tmp, sweep_file + " --shards 3 --throttle 2");
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file(tmp / "stdout") << read_file(tmp / "sbatch.log");
  EXPECT_NE(
      read_file(tmp / "sbatch.log").find("sbatch --parsable --array=0-2%2 " + tmp / "out/slurm/shard.sbatch"),
      std::string::npos)
      << read_file(tmp / "sbatch.log");
  EXPECT_NE(read_file(tmp / "stdout").find("(tasks 0-2, at most 2 at once)"), std::string::npos)
      << read_file(tmp / "stdout");
  EXPECT_NE(read_file(tmp / "out/slurm/merge-4243.log").find("merged 3 of 3 points"), std::string::npos);

  TempDir bad;
  const std::string refused = slurm_sweep_command(bad, sweep_file + " --shards 3 --throttle 0");
  const int status = std::system(refused.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << read_file(bad / "stdout");
  EXPECT_NE(read_file(bad / "stdout").find("--throttle must be a positive integer"), std::string::npos);
  EXPECT_FALSE(fs::exists(bad / "sbatch.log"));
}

using Variables = std::vector<std::pair<std::string, std::string>>;  // name, value

// Sets environment variables for its scope; the semsim children inherit them.
class Environment {
 public:
  explicit Environment(Variables variables) : variables_(std::move(variables)) {
    for (const auto& [name, value] : variables_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~Environment() {
    for (const auto& [name, value] : variables_) ::unsetenv(name.c_str());
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  Variables variables_;
};

TEST(cliSlurmSweep, SweepTakesItsShardFromTheArrayTaskUnlessGivenOne) {
  TempDir tmp;
  const std::string sweep_file = tmp / "sweep.yaml";
  std::ofstream(sweep_file) << kSixPoints;
  // --dry-run lists the shard's points: what a run would simulate.
  auto listing = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args{"sweep", sweep_file, "--dry-run"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    return r;
  };
  const std::string all = listing({}).out, first = listing({"--shard", "0/3"}).out,
                    second = listing({"--shard", "1/3"}).out;
  ASSERT_EQ(split_lines(all).size(), 7u) << all;  // the header, six points
  ASSERT_EQ(split_lines(second).size(), 3u) << second;
  {
    Environment task({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}});
    const CliResult from_task = listing({});
    EXPECT_EQ(from_task.out, second);
    EXPECT_NE(from_task.err.find("sweep: shard 1/3 from the Slurm array task (SLURM_ARRAY_TASK_ID=1, "
                                 "SLURM_ARRAY_TASK_COUNT=3)"),
              std::string::npos)
        << from_task.err;
    const CliResult given = listing({"--shard", "0/3"});
    EXPECT_EQ(given.out, first);
    EXPECT_EQ(given.err.find("Slurm"), std::string::npos) << given.err;
  }
  {
    // --array=1-3: the ids count from SLURM_ARRAY_TASK_MIN.
    Environment task({{"SLURM_ARRAY_TASK_ID", "2"},
                      {"SLURM_ARRAY_TASK_COUNT", "3"},
                      {"SLURM_ARRAY_TASK_MIN", "1"},
                      {"SLURM_ARRAY_TASK_MAX", "3"}});
    EXPECT_EQ(listing({}).out, second);
  }
  {
    Environment half(Variables{{"SLURM_ARRAY_TASK_ID", "1"}});  // no task count: not an array task's shard
    EXPECT_EQ(listing({}).out, all);
  }
}

TEST(cliSlurmSweep, AMalformedArrayTaskIsAnErrorBeforeAnythingRuns) {
  TempDir tmp;
  const std::string sweep_file = tmp / "sweep.yaml";
  std::ofstream(sweep_file) << kSixPoints;
  struct Case {
    Variables variables;
    std::string message;
  };
  for (const Case& c :
       {Case{{{"SLURM_ARRAY_TASK_ID", "x1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}},
             "SLURM_ARRAY_TASK_ID='x1': not a whole number"},
        Case{{{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3.5"}},
             "SLURM_ARRAY_TASK_COUNT='3.5': not a whole number"},
        Case{{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}},
             "SLURM_ARRAY_TASK_ID=3 of SLURM_ARRAY_TASK_COUNT=3 (ids 0 to 2): not one of 3 consecutive"},
        // --array=1,3,5: three tasks whose ids leave gaps.
        Case{{{"SLURM_ARRAY_TASK_ID", "3"},
              {"SLURM_ARRAY_TASK_COUNT", "3"},
              {"SLURM_ARRAY_TASK_MIN", "1"},
              {"SLURM_ARRAY_TASK_MAX", "5"}},
             "(ids 1 to 5): not one of 3 consecutive array task ids, so it names no shard; give --shard "
             "i/n"}}) {
    Environment task(c.variables);
    const std::vector<std::string> args{"sweep", sweep_file, "--out", tmp / "out"};
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << describe(args, r);
    EXPECT_FALSE(fs::exists(tmp / "out"));
  }
}

TEST(cliSlurmSweep, ABadSweepFileIsRefusedBeforeSubmitting) {
  TempDir tmp;
  const std::string sweep_file = tmp / "sweep.yaml";
  std::ofstream(sweep_file) << "sweep: 1\nbase: default\naxes:\n  - workload.rat: [1]\n";
  const std::string command = "PATH=/nonexistent:$PATH " + std::string(SEMSIM_SOURCE_DIR) +
                              "/scripts/slurm-sweep " + sweep_file + " --shards 2 --out " + tmp / "out" +
                              " --semsim " + SEMSIM_BINARY + " > " + tmp / "stdout" + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << read_file(tmp / "stdout");
  EXPECT_NE(read_file(tmp / "stdout").find("unknown key 'rat'"), std::string::npos)
      << read_file(tmp / "stdout");
}

}  // namespace
}  // namespace semsim::cli_test
