#pragma once
// Which rank of a multi-process calibration this process is, from the variables its launcher sets:
// Slurm's srun, Open MPI's mpirun, or an MPICH-style launcher (Hydra, PMI). No launcher: the one
// process of a single-node run. Pure C++ (no MPI): the microbenchmarks build with it too.
#include <map>
#include <string>

namespace semsim {

enum class Launcher { kNone, kSlurm, kOpenMpi, kMpich };
const char* launcher_name(Launcher launcher);

// Names the run: files of another run in a shared folder (an earlier job's NCCL id) never match it.
inline constexpr const char* kRunTokenVariable = "SEMSIM_CALIBRATE_RUN";

struct RankIdentity {
  Launcher launcher = Launcher::kNone;
  int rank = 0;
  int ranks = 1;
  int local_rank = 0;   // index on its node: the GPU it drives, the rail it is on
  int local_ranks = 1;  // ranks per node (every node runs as many)
  int node = 0;         // index of its node, 0 .. ranks / local_ranks - 1
  std::string host;
  std::string run;  // the run token ("" without a launcher)

  int nodes() const { return ranks / local_ranks; }
};

using Environment = std::map<std::string, std::string>;

// This process's environment variables.
Environment process_environment();

// The identity `environment` describes, `host` when no launcher variable names the host.
// `visible_gpus` > 0 checks that the local rank has a GPU: each rank drives GPU `local_rank`, or
// GPU 0 when the launcher gave every rank exactly one (srun --gpus-per-task=1). Missing, non-integer
// or inconsistent values (rank >= size, local rank >= GPUs, nodes of unequal size) are InputErrors
// naming the variables.
RankIdentity rank_identity(const Environment& environment, const std::string& host, int visible_gpus = 0);

// The GPU a rank drives among `visible_gpus` (see rank_identity).
int rank_device(const RankIdentity& identity, int visible_gpus);

// This machine's host name.
std::string local_host_name();

}  // namespace semsim
