#pragma once
// NCCL collectives in the conventions of nccl-tests (algbw = bytes / time, busbw = algbw x the
// collective's bus factor), per-rank buffers of 1 KiB .. 1 GiB, each point also a data check
// (patterns.hpp; wrong elements in checks.csv, the point then not used). Either one process drives
// every local GPU (ncclCommInitAll; every rank count of the node, scale-up), or, started by a
// launcher, one process per GPU over nodes: the world communicator from an id rank 0 publishes in
// the shared raw folder, split into node 0's groups (scale-up), groups of the first 2 .. N nodes
// (scale-out) and two-GPU pairs between nodes on one rail and across rails (point to point).
// Scale-out all-to-all bus bytes are what each GPU sends off its node (its NIC's share), so its
// efficiency is against the NIC.
#include <nccl.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/bench/memory.hpp"
#include "calibrate/bench/report.hpp"
#include "calibrate/runtime/launcher.hpp"

namespace semsim::bench {

extern const std::vector<std::string> kCollectiveColumns;

// Throws like the CUDA checks (check.hpp) on an NCCL failure; ncclInProgress is no error.
void check_nccl(ncclResult_t status, const char* call, const char* file, int line);

// One rank's share of an all-to-all(v), inside the caller's NCCL group: send_bytes[p] to each peer p
// from `send` and receive_bytes[p] from it into `receive`, each buffer packed peer after peer in rank
// order. A pair with nothing to move posts no call (NCCL would still pair the two up).
void post_all_to_allv(const std::vector<long long>& send_bytes, const std::vector<long long>& receive_bytes,
                      const DeviceBuffer& send, const DeviceBuffer& receive, ncclComm_t comm,
                      cudaStream_t stream);

// What may end a wait on the GPUs: the time one point may take, and a reason to stop (another
// rank's fault, seen by the heartbeat watch); each point measured is reported as progress.
struct CollectiveWatch {
  double point_seconds = 600;
  std::function<std::optional<std::string>()> abort_reason = [] { return std::nullopt; };
  std::function<void(const std::string& phase)> progressed = [](const std::string&) {};
};

// One process, every local GPU.
void run_collectives(int gpus, double seconds, bool quick, CsvWriter& csv, CsvWriter& checks,
                     const Progress& progress);

// One rank of a launcher's run, driving GPU `device`; the NCCL id goes through `raw`.
void run_world_collectives(const RankIdentity& rank, int device, const std::string& raw, double seconds,
                           bool quick, const CollectiveWatch& watch, CsvWriter& csv, CsvWriter& checks,
                           const Progress& progress);

}  // namespace semsim::bench

#define SEMSIM_NCCL(call) ::semsim::bench::check_nccl((call), #call, __FILE__, __LINE__)
