#include "calibrate/runtime/launcher.hpp"

#include <unistd.h>

#include <charconv>
#include <optional>

#include "models/input_error.hpp"

extern char** environ;

namespace semsim {
namespace {

class Variables {
 public:
  Variables(const Environment& environment, Launcher launcher)
      : environment_(environment), launcher_(launcher) {}

  std::optional<std::string> text(const std::string& name) const {
    const auto it = environment_.find(name);
    if (it == environment_.end() || it->second.empty()) return std::nullopt;
    return it->second;
  }

  int integer(const std::string& name, int least) const {
    const auto value = text(name);
    if (!value) fail(name + " is not set");
    int parsed = 0;
    const char* end = value->data() + value->size();
    const auto [stop, error] = std::from_chars(value->data(), end, parsed);
    if (error != std::errc() || stop != end) fail(name + "=" + *value + " is not an integer");
    if (parsed < least) fail(name + "=" + *value + " is below " + std::to_string(least));
    return parsed;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(std::string("calibrate: bad ") + launcher_name(launcher_) + " environment: " + why,
                     "environment");
  }

 private:
  const Environment& environment_;
  Launcher launcher_;
};

Launcher detect(const Environment& environment) {
  // An mpirun inside a Slurm job inherits the job's SLURM_ variables: MPI's own come first. A batch
  // script is not a step (no SLURM_STEP_NUM_TASKS): a run started there without srun is single-node.
  if (environment.count("OMPI_COMM_WORLD_RANK")) return Launcher::kOpenMpi;
  if (environment.count("PMI_RANK")) return Launcher::kMpich;
  if (environment.count("SLURM_PROCID") && environment.count("SLURM_STEP_NUM_TASKS")) return Launcher::kSlurm;
  return Launcher::kNone;
}

}  // namespace

const char* launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::kSlurm:
      return "Slurm";
    case Launcher::kOpenMpi:
      return "Open MPI";
    case Launcher::kMpich:
      return "MPICH";
    case Launcher::kNone:
      break;
  }
  return "no launcher";
}

Environment process_environment() {
  Environment environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string::npos) environment[text.substr(0, equals)] = text.substr(equals + 1);
  }
  return environment;
}

std::string local_host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("unknown-host");
}

RankIdentity rank_identity(const Environment& environment, const std::string& host, int visible_gpus) {
  RankIdentity id;
  id.launcher = detect(environment);
  id.host = host;
  if (id.launcher == Launcher::kNone) return id;
  const Variables v(environment, id.launcher);
  std::string rank_names;
  std::optional<std::string> run;
  if (id.launcher == Launcher::kSlurm) {
    id.rank = v.integer("SLURM_PROCID", 0);
    id.ranks = v.integer("SLURM_STEP_NUM_TASKS", 1);
    id.local_rank = v.integer("SLURM_LOCALID", 0);
    id.node = v.integer("SLURM_NODEID", 0);
    const int nodes = v.integer("SLURM_STEP_NUM_NODES", 1);
    if (id.ranks % nodes != 0)
      v.fail("SLURM_STEP_NUM_TASKS=" + std::to_string(id.ranks) + " tasks over SLURM_STEP_NUM_NODES=" +
             std::to_string(nodes) + " nodes: every node must run as many (one task per GPU)");
    id.local_ranks = id.ranks / nodes;
    if (id.node >= nodes)
      v.fail("SLURM_NODEID=" + std::to_string(id.node) +
             " is not below SLURM_STEP_NUM_NODES=" + std::to_string(nodes));
    id.host = v.text("SLURMD_NODENAME").value_or(host);
    rank_names = "SLURM_PROCID, SLURM_LOCALID";
    if (const auto job = v.text("SLURM_JOB_ID")) run = *job + "." + v.text("SLURM_STEP_ID").value_or("0");
  } else {
    const bool open_mpi = id.launcher == Launcher::kOpenMpi;
    const std::string rank = open_mpi ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK";
    const std::string size = open_mpi ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE";
    const std::string local = open_mpi ? "OMPI_COMM_WORLD_LOCAL_RANK" : "MPI_LOCALRANKID";
    const std::string local_size = open_mpi ? "OMPI_COMM_WORLD_LOCAL_SIZE" : "MPI_LOCALNRANKS";
    id.rank = v.integer(rank, 0);
    id.ranks = v.integer(size, 1);
    id.local_rank = v.integer(local, 0);
    id.local_ranks = v.integer(local_size, 1);
    if (id.ranks % id.local_ranks != 0)
      v.fail(size + "=" + std::to_string(id.ranks) + " is not a multiple of " + local_size + "=" +
             std::to_string(id.local_ranks) + ": every node must run as many ranks (one per GPU)");
    // MPI names no node index: with ranks placed by node (mpirun's default, --map-by slot), node k
    // holds ranks k*L .. k*L+L-1. The merge checks that each node's ranks reported one host.
    id.node = id.rank / id.local_ranks;
    rank_names = rank + ", " + local;
    run = open_mpi ? v.text("PMIX_NAMESPACE") : v.text("PMI_KVSNAME");
  }
  if (id.rank >= id.ranks)
    v.fail("rank " + std::to_string(id.rank) + " is not below the " + std::to_string(id.ranks) + " ranks (" +
           rank_names + ")");
  if (id.local_rank >= id.local_ranks)
    v.fail("local rank " + std::to_string(id.local_rank) + " is not below the " +
           std::to_string(id.local_ranks) + " ranks per node (" + rank_names + ")");
  if (visible_gpus > 0 && visible_gpus != 1 && id.local_rank >= visible_gpus)
    v.fail("local rank " + std::to_string(id.local_rank) + " has no GPU: this node shows " +
           std::to_string(visible_gpus) + " (run one rank per GPU)");
  if (const auto token = v.text(kRunTokenVariable)) run = token;
  if (!run)
    v.fail(std::string("nothing names this run: set ") + kRunTokenVariable +
           " to a value unique to it (e.g. mpirun -x " + kRunTokenVariable + "=$(date +%s%N))");
  id.run = *run;
  return id;
}

int rank_device(const RankIdentity& identity, int visible_gpus) {
  return visible_gpus == 1 ? 0 : identity.local_rank;
}

}  // namespace semsim
