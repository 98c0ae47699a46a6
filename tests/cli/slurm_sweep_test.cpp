// scripts/slurm-sweep against a stand-in sbatch that runs each job at once (array tasks one after
// another): the array covers every shard, the merge depends on the array, and the merged
// points.csv equals an unsharded run's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

// Logs its arguments, runs the job script (each array index in turn), prints a job id.
constexpr const char* kFakeSbatch = R"(#!/usr/bin/env bash
set -euo pipefail
echo "sbatch $*" >>"$SBATCH_LOG"
array="" script=""
for arg in "$@"; do
  case "$arg" in --array=*) array=${arg#--array=} ;; -*) ;; *) script=$arg ;; esac
done
if [[ -n $array ]]; then
  for ((i = ${array%-*}; i <= ${array#*-}; i++)); do SLURM_ARRAY_TASK_ID=$i bash "$script" >>"$SBATCH_LOG" 2>&1; done
  echo "4242;cluster"
else
  bash "$script" >>"$SBATCH_LOG" 2>&1
  echo "4243"
fi
)";

TEST(cliSlurmSweep, SubmitsAnArrayOverShardsThenAMergeThatEqualsAnUnshardedRun) {
  TempDir tmp;
  const std::string sweep_file = tmp / "sweep.yaml";
  std::ofstream(sweep_file) << "sweep: 1\nbase: default\nset: {workload.requests: 8}\n"
                               "axes:\n  - workload.arrival.rate: [5, 10, 20]\n  - workload.seed: [1, 2]\n";
  fs::create_directories(tmp / "bin");
  std::ofstream(tmp / "bin/sbatch") << kFakeSbatch;
  fs::permissions(tmp / "bin/sbatch", fs::perms::owner_all);

  const std::string command = "PATH=" + tmp / "bin" + ":$PATH SBATCH_LOG=" + tmp / "sbatch.log" + " " +
                              SEMSIM_SOURCE_DIR + "/scripts/slurm-sweep " + sweep_file +
                              " --shards 4 --out " + tmp / "out" + " --semsim " + SEMSIM_BINARY +
                              " -- --partition=cpu > " + tmp / "stdout" + " 2>&1";
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
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(fs::exists(tmp / ("out/shards/" + std::to_string(i) + "/points.csv"))) << i;

  const CliResult whole = run_semsim({"sweep", sweep_file, "--out", tmp / "whole"});
  ASSERT_EQ(whole.exit_code, 0) << describe({"sweep"}, whole);
  EXPECT_EQ(read_file(fs::path(tmp / "out") / "points.csv"),
            read_file(fs::path(tmp / "whole") / "points.csv"));
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
