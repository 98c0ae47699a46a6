#include "sim/collective_pricing.hpp"

namespace semsim {

ExchangeShape ExchangeShape::of(const Scenario& scenario) {
  return {scenario.ep, scenario.model.hidden * scenario.dispatch_bytes_per_element,
          scenario.model.hidden * scenario.precision.activation_bytes};
}

CollectivePricing::CollectivePricing(const ExchangeShape& shape, const CalibrationProfile& profile,
                                     const Topology& topology, double collective_overhead,
                                     const DispatchTiming& dispatch, const NcclTimes* nccl)
    : shape_(shape),
      topology_(topology),
      dispatch_(dispatch),
      nccl_(nccl),
      overhead_(shape.ep > 1 ? all_to_all_overhead(profile, topology, collective_overhead) : 0.0),
      shard_pairs_(shard_exchange_pairs(shape.ep, topology.devices_per_node)) {}

CollectivePricing::Exchanges CollectivePricing::exchanges(std::span<const long long> copies) const {
  Exchanges both{all_to_allv(copies, shape_.ep, shape_.dispatch_bytes_per_copy, false, overhead_),
                 all_to_allv(copies, shape_.ep, shape_.combine_bytes_per_copy, true, overhead_)};
  if (!dispatch_.measured()) return both;
  const ExchangeSeconds seconds = dispatch_.measured_seconds(step_, copies, shape_.dispatch_bytes_per_copy,
                                                             shape_.combine_bytes_per_copy);
  return {timed(both.dispatch, seconds.dispatch), timed(both.combine, seconds.combine)};
}

Collective CollectivePricing::shard(ShardCollective kind, double shard_bytes) const {
  if (nccl_ == nullptr) return equal_shard_exchange(shard_pairs_, shape_.ep, shard_bytes, overhead_);
  // An all-reduce moves a reduce-scatter's shards and then an all-gather's.
  const double moved = (kind == ShardCollective::kAllReduce ? 2 : 1) * shard_bytes;
  return timed(equal_shard_exchange(shard_pairs_, shape_.ep, moved, overhead_),
               nccl_->seconds(kind, shard_bytes));
}

double CollectivePricing::shard_bytes_moved(ShardCollective kind, double shard_bytes) const {
  const auto [known, added] = shard_bytes_moved_.try_emplace(shard_bytes, 0.0);
  if (added) {
    const LevelBytes moved =
        level_bytes(equal_shard_exchange(shard_pairs_, shape_.ep, shard_bytes, overhead_).traffic, topology_);
    known->second = moved.scale_up + moved.scale_out;
  }
  return (kind == ShardCollective::kAllReduce ? 2 : 1) * known->second;
}

}  // namespace semsim
