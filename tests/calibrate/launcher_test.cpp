// Launcher environments (Slurm, Open MPI, MPICH-style, none) as fixtures of their variables, the
// identities they give, and inconsistent values as errors naming the variables.
#include "calibrate/runtime/launcher.hpp"

#include <gtest/gtest.h>

#include "tests/unit_test_helpers.hpp"

namespace semsim {
namespace {

using test::error_of;

// Rank 11 of 16 under srun: node 1 (of 2), local 3.
Environment slurm() {
  return {{"SLURM_PROCID", "11"},   {"SLURM_STEP_NUM_TASKS", "16"}, {"SLURM_LOCALID", "3"},
          {"SLURM_NODEID", "1"},    {"SLURM_STEP_NUM_NODES", "2"},  {"SLURMD_NODENAME", "gpu-b"},
          {"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "0"},         {"SLURM_NTASKS", "16"}};
}

Environment open_mpi() {
  return {{"OMPI_COMM_WORLD_RANK", "5"},
          {"OMPI_COMM_WORLD_SIZE", "8"},
          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
          {"PMIX_NAMESPACE", "prterun-x-1@1"}};
}

Environment mpich() {
  return {{"PMI_RANK", "2"},
          {"PMI_SIZE", "4"},
          {"MPI_LOCALRANKID", "0"},
          {"MPI_LOCALNRANKS", "2"},
          {kRunTokenVariable, "run-7"}};
}

TEST(Launcher, SlurmRankNodeHostAndRunFromItsVariables) {
  const RankIdentity id = rank_identity(slurm(), "ignored", 8);
  EXPECT_EQ(id.launcher, Launcher::kSlurm);
  EXPECT_EQ(id.rank, 11);
  EXPECT_EQ(id.ranks, 16);
  EXPECT_EQ(id.local_rank, 3);
  EXPECT_EQ(id.local_ranks, 8);
  EXPECT_EQ(id.node, 1);
  EXPECT_EQ(id.nodes(), 2);
  EXPECT_EQ(id.host, "gpu-b");
  EXPECT_EQ(id.run, "4242.0");
  EXPECT_EQ(rank_device(id, 8), 3);
  EXPECT_EQ(rank_device(id, 1), 0) << "srun --gpus-per-task=1 shows each task its own GPU";
  Environment no_name = slurm();
  no_name.erase("SLURMD_NODENAME");
  EXPECT_EQ(rank_identity(no_name, "this-host").host, "this-host");
}

TEST(Launcher, OpenMpiAndMpichPlaceRanksByNode) {
  const RankIdentity ompi = rank_identity(open_mpi(), "h1", 4);
  EXPECT_EQ(ompi.launcher, Launcher::kOpenMpi);
  EXPECT_EQ(ompi.rank, 5);
  EXPECT_EQ(ompi.node, 1);  // ranks 4..7
  EXPECT_EQ(ompi.local_rank, 1);
  EXPECT_EQ(ompi.host, "h1");
  EXPECT_EQ(ompi.run, "prterun-x-1@1");
  const RankIdentity hydra = rank_identity(mpich(), "h2");
  EXPECT_EQ(hydra.launcher, Launcher::kMpich);
  EXPECT_EQ(hydra.node, 1);
  EXPECT_EQ(hydra.nodes(), 2);
  EXPECT_EQ(hydra.run, "run-7");
  // mpirun inside a Slurm job: MPI's variables win over the job's inherited SLURM_ ones.
  Environment both = open_mpi();
  for (const auto& [key, value] : slurm()) both[key] = value;
  EXPECT_EQ(rank_identity(both, "h").launcher, Launcher::kOpenMpi);
  // The token names the run over the launcher's own.
  both[kRunTokenVariable] = "mine";
  EXPECT_EQ(rank_identity(both, "h").run, "mine");
}

TEST(Launcher, NoLauncherIsTheOneProcessOfASingleNodeRun) {
  const RankIdentity id = rank_identity({{"HOME", "/root"}}, "box", 8);
  EXPECT_EQ(id.launcher, Launcher::kNone);
  EXPECT_EQ(id.ranks, 1);
  EXPECT_EQ(id.host, "box");
  // A batch script holds SLURM_PROCID but is no step: still one process.
  EXPECT_EQ(
      rank_identity({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_ID", "1"}}, "box").launcher,
      Launcher::kNone);
}

TEST(Launcher, InconsistentValuesAreErrorsNamingTheVariables) {
  Environment e = slurm();
  e["SLURM_PROCID"] = "16";
  EXPECT_EQ(
      error_of([&] { rank_identity(e, "h"); }),
      "calibrate: bad Slurm environment: rank 16 is not below the 16 ranks (SLURM_PROCID, SLURM_LOCALID)");
  e = slurm();
  e["SLURM_LOCALID"] = "3x";
  EXPECT_EQ(error_of([&] { rank_identity(e, "h"); }),
            "calibrate: bad Slurm environment: SLURM_LOCALID=3x is not an integer");
  e = slurm();
  e["SLURM_STEP_NUM_TASKS"] = "15";
  e["SLURM_PROCID"] = "1";
  EXPECT_EQ(
      error_of([&] { rank_identity(e, "h"); }),
      "calibrate: bad Slurm environment: SLURM_STEP_NUM_TASKS=15 tasks over SLURM_STEP_NUM_NODES=2 nodes: "
      "every node must run as many (one task per GPU)");
  e = slurm();
  e.erase("SLURM_NODEID");
  EXPECT_EQ(error_of([&] { rank_identity(e, "h"); }),
            "calibrate: bad Slurm environment: SLURM_NODEID is not set");
  EXPECT_EQ(
      error_of([&] { rank_identity(slurm(), "h", 2); }),
      "calibrate: bad Slurm environment: local rank 3 has no GPU: this node shows 2 (run one rank per GPU)");
  e = open_mpi();
  e["OMPI_COMM_WORLD_LOCAL_RANK"] = "4";
  EXPECT_EQ(error_of([&] { rank_identity(e, "h"); }),
            "calibrate: bad Open MPI environment: local rank 4 is not below the 4 ranks per node "
            "(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK)");
  e = open_mpi();
  e["OMPI_COMM_WORLD_SIZE"] = "6";
  EXPECT_EQ(error_of([&] { rank_identity(e, "h"); }),
            "calibrate: bad Open MPI environment: OMPI_COMM_WORLD_SIZE=6 is not a multiple of "
            "OMPI_COMM_WORLD_LOCAL_SIZE=4: every node must run as many ranks (one per GPU)");
  e = mpich();
  e.erase(kRunTokenVariable);
  EXPECT_EQ(
      error_of([&] { rank_identity(e, "h"); }),
      "calibrate: bad MPICH environment: nothing names this run: set SEMSIM_CALIBRATE_RUN to a value unique "
      "to it (e.g. mpirun -x SEMSIM_CALIBRATE_RUN=$(date +%s%N))");
  e = mpich();
  e["PMI_SIZE"] = "-4";
  EXPECT_EQ(error_of([&] { rank_identity(e, "h"); }),
            "calibrate: bad MPICH environment: PMI_SIZE=-4 is below 1");
}

}  // namespace
}  // namespace semsim
