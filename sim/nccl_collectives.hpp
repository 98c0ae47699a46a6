#pragma once
// The time of Attention-TP's collectives as NCCL takes them, from a profile's measured NCCL fits
// (calibrate/fit/fit.hpp: alpha + bus bytes over the bus bandwidth at the message's size), where the
// profile measured the group's rank count: within one node (scale-up fits), or across nodes for a group
// that spans them (scale-out fits, measured by a multi-node calibration). The measured time is the
// collective's whole: it replaces the topology's pricing of the shards as direct copies, which knows neither
// NCCL's ring and NVLS algorithms nor its protocol costs at small messages. Elsewhere (a datasheet
// profile, another rank count, a group over nodes that none measured) the shards cross the topology as
// before.
#include <array>
#include <optional>
#include <string>

#include "calibrate/fit/interpolation.hpp"
#include "calibrate/format/profile.hpp"

namespace semsim {

enum class ShardCollective { kReduceScatter, kAllGather, kAllReduce };

class NcclTimes {
 public:
  // Nothing when the profile holds no reduce-scatter and all-gather fit of `ranks` ranks at the
  // group's level (scale-up within a node, scale-out across nodes); `why_not` then says why (for the
  // summary).
  static std::optional<NcclTimes> make(const CalibrationProfile& profile, int ranks, int devices_per_node,
                                       std::string& why_not);

  // Whether the profile measured the all-reduce too (else it is a reduce-scatter then an all-gather).
  bool has_all_reduce() const { return measured_[static_cast<int>(ShardCollective::kAllReduce)].has_value(); }
  // Seconds of one collective over shards of `shard_bytes` per rank (the all-reduce's buffer is every
  // shard together).
  double seconds(ShardCollective kind, double shard_bytes) const;
  // What summary.json says timed the collectives.
  std::string description() const;

 private:
  struct Measured {
    CollectiveFit fit;
    BandwidthFactor factor;
  };
  NcclTimes() = default;
  int ranks_ = 0;
  bool across_nodes_ = false;
  std::array<std::optional<Measured>, 3> measured_;  // by ShardCollective
};

}  // namespace semsim
