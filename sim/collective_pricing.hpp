#pragma once
// Prices the collectives a step builder adds: the MoE dispatch and combine (DeepEP's measured
// kernels where sim/dispatch_timing.hpp says they time them, else the copies over the topology) and
// Attention-TP's shard collectives (NCCL's measured fits where the profile has them, else the shards
// over the topology). A measured time is the whole collective: its bytes load no link.
#include <map>
#include <span>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/dispatch_timing.hpp"
#include "sim/nccl_collectives.hpp"
#include "sim/scenario.hpp"

namespace semsim {

// What the exchanges of an EP group carry: `semsim collective` and a run's steps give the same.
struct ExchangeShape {
  int ep = 1;
  double dispatch_bytes_per_copy = 0;  // a token's hidden state as dispatched (FP8 or BF16)
  double combine_bytes_per_copy = 0;   // as combined (the activations' precision)
  static ExchangeShape of(const Scenario& scenario);
};

class CollectivePricing {
 public:
  // `collective_overhead` is the cost model's launch and synchronisation time of a collective;
  // `topology` the effective one (sim/run_plan.hpp), link bandwidths at the profile's efficiencies.
  CollectivePricing(const ExchangeShape& shape, const CalibrationProfile& profile, const Topology& topology,
                    double collective_overhead, const DispatchTiming& dispatch, const NcclTimes* nccl);
  CollectivePricing(const Scenario& scenario, const Topology& topology, double collective_overhead,
                    const DispatchTiming& dispatch, const NcclTimes* nccl)
      : CollectivePricing(ExchangeShape::of(scenario), *scenario.calibration, topology, collective_overhead,
                          dispatch, nccl) {}

  // What this step's dispatch and combine move and which kernel runs them.
  void start_step(bool decode_only) { step_ = dispatch_.for_step(decode_only); }
  DispatchMode traffic() const { return step_.traffic; }

  // A dispatch of `copies[src * ep + dst]` token copies and its combine (the same copies back).
  struct Exchanges {
    Collective dispatch, combine;
  };
  Exchanges exchanges(std::span<const long long> copies) const;
  // A reduce-scatter, all-gather or all-reduce of `shard_bytes` per rank, and the bytes its shards
  // move over the topology whatever times it (an all-reduce: a reduce-scatter's, then an all-gather's).
  Collective shard(ShardCollective kind, double shard_bytes) const;
  double shard_bytes_moved(ShardCollective kind, double shard_bytes) const;
  // NCCL's measured all-reduce times a dense layer's reduction as one collective.
  bool has_all_reduce() const { return nccl_ != nullptr && nccl_->has_all_reduce(); }
  const ExchangeShape& shape() const { return shape_; }

 private:
  ExchangeShape shape_;
  const Topology& topology_;
  const DispatchTiming& dispatch_;
  const NcclTimes* nccl_;
  double overhead_;  // a group of one device has no collective at all; any larger group launches each one
  std::vector<long long> shard_pairs_;  // shard_exchange_pairs of the group
  StepExchange step_;
  mutable std::map<double, double> shard_bytes_moved_;  // one shard's bytes over the topology, by its size
};

}  // namespace semsim
