#pragma once
// The collectives of a step, as traffic over the EP group plus a fixed overhead: dispatch and
// combine all-to-allv, and Attention-TP's reduce-scatter, all-gather and all-reduce. Each is built
// here, from whole copies of one payload per (source, destination) pair; the executors price and
// run them (sim/step_executor.hpp). Algorithms: direct (every pair its own transfer); ring and
// hierarchical variants belong here too.
#include <optional>
#include <span>
#include <vector>

#include "sim/network.hpp"

namespace semsim {

struct Collective {
  CopyTraffic traffic;  // copies per pair and their bytes; its storage must outlive the step's execution
  double overhead = 0;  // launch and synchronisation seconds before any byte moves
  // The whole collective's time where a measured kernel gives it (DeepEP's, NCCL's tables); its
  // traffic then loads no link (StepGraph adds it as a timed collective).
  std::optional<double> measured_seconds;
};

// The collective as its measured kernel takes it: `seconds` in all, its traffic only counted.
inline Collective timed(Collective collective, double seconds) {
  collective.overhead = 0;
  collective.measured_seconds = seconds;
  return collective;
}

// The time of `collective` run alone, as a step of nothing else runs it: its measured time, or its
// overhead and then its traffic over the network.
double alone_seconds(const Collective& collective, LoneCollectiveTime& network);

// Dispatch: `copies[src * devices + dst]` token copies of `bytes_per_copy` each. Combine returns
// every dispatched copy to its sender (`reverse`), possibly at another precision.
Collective all_to_allv(std::span<const long long> copies, int devices, double bytes_per_copy, bool reverse,
                       double overhead);

// One copy from every device to every other device (zero on the diagonal).
std::vector<long long> every_pair(int devices);

// The pattern of the equal-shard collectives below, in copies of one rank's shard (the buffer over
// `devices`) per ordered pair. Within a node: one per pair, NCCL's direct exchange. A group across
// nodes moves its buffer as NCCL's rings do, one ring per NIC: each GPU's NIC carries about its
// buffer over `devices_per_node`, not the shards of every remote rank. Priced here as the
// hierarchical equivalent with the same per-NIC bytes: the buffer reduced (or gathered) inside each
// node, N copies of a shard per intra-node pair, then across the N nodes between the GPUs of the
// same local index, one copy per pair. (N = 1 gives every_pair.)
std::vector<long long> shard_exchange_pairs(int devices, int devices_per_node);

// NCCL's reduce-scatter (each rank receives its shard's partial sums from the others) and all-gather
// (each rank sends its shard to the others) move the same traffic: `pairs[src * devices + dst]`
// copies of `shard_bytes` (shard_exchange_pairs).
Collective equal_shard_exchange(std::span<const long long> pairs, int devices, double shard_bytes,
                                double overhead);

}  // namespace semsim
