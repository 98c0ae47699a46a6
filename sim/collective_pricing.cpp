#include "sim/collective_pricing.hpp"

namespace semsim {

CollectivePricing::CollectivePricing(const Scenario& scenario, const Topology& topology,
                                     double collective_overhead, const DispatchTiming& dispatch,
                                     const NcclTimes* nccl)
    : scenario_(scenario),
      topology_(topology),
      dispatch_(dispatch),
      nccl_(nccl),
      overhead_(scenario.ep > 1 ? all_to_all_overhead(*scenario.calibration, topology, collective_overhead)
                                : 0.0),
      every_pair_(every_pair(scenario.ep)) {}

Collective CollectivePricing::exchange(std::span<const long long> copies, bool combine) const {
  const double bytes_per_copy = scenario_.model.hidden * (combine ? scenario_.precision.activation_bytes
                                                                  : scenario_.dispatch_bytes_per_element);
  if (!dispatch_.measured()) return all_to_allv(copies, scenario_.ep, bytes_per_copy, combine, overhead_);
  // DeepEP's time is the measured kernel's: no bytes of its own cross the topology (the step's
  // traffic counters still count them).
  Collective measured = all_to_allv(copies, scenario_.ep, 0.0, combine,
                                    dispatch_.measured_seconds(step_, combine, copies, bytes_per_copy));
  measured.payload_bytes_per_copy = bytes_per_copy;
  return measured;
}

Collective CollectivePricing::shard(ShardCollective kind, double shard_bytes) const {
  if (nccl_ == nullptr) return equal_shard_exchange(every_pair_, scenario_.ep, shard_bytes, overhead_);
  // NCCL's measured time is the whole collective: no bytes of its own cross the topology.
  Collective measured =
      equal_shard_exchange(every_pair_, scenario_.ep, 0.0, nccl_->seconds(kind, shard_bytes));
  measured.payload_bytes_per_copy = (kind == ShardCollective::kAllReduce ? 2 : 1) * shard_bytes;
  return measured;
}

double CollectivePricing::shard_bytes_moved(ShardCollective kind, double shard_bytes) const {
  const LevelBytes moved =
      level_bytes(equal_shard_exchange(every_pair_, scenario_.ep, shard_bytes, overhead_).traffic, topology_);
  return (kind == ShardCollective::kAllReduce ? 2 : 1) * (moved.scale_up + moved.scale_out);
}

}  // namespace semsim
