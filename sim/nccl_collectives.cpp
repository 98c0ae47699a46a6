#include "sim/nccl_collectives.hpp"

#include <fmt/format.h>

#include "calibrate/fit.hpp"

namespace semsim {
namespace {

const char* collective_name(ShardCollective kind) {
  switch (kind) {
    case ShardCollective::kReduceScatter:
      return "reduce_scatter";
    case ShardCollective::kAllGather:
      return "all_gather";
    default:
      return "all_reduce";
  }
}

}  // namespace

std::optional<NcclTimes> NcclTimes::make(const CalibrationProfile& profile, int ranks, int devices_per_node,
                                         std::string& why_not) {
  if (ranks > devices_per_node) {
    why_not = fmt::format("topology (NCCL is measured within one node; this group of {} spans nodes of {})",
                          ranks, devices_per_node);
    return std::nullopt;
  }
  NcclTimes t;
  t.ranks_ = ranks;
  for (const CollectiveFit& fit : profile.collectives) {
    if (fit.level != "scaleup" || fit.ranks != ranks) continue;
    std::optional<Measured>* slot = fit.collective == "reduce_scatter" ? &t.reduce_scatter_
                                    : fit.collective == "all_gather"   ? &t.all_gather_
                                    : fit.collective == "all_reduce"   ? &t.all_reduce_
                                                                       : nullptr;
    if (slot != nullptr) slot->emplace(Measured{fit, BandwidthFactor(fit)});
  }
  if (!t.reduce_scatter_ || !t.all_gather_) {
    why_not = fmt::format(
        "topology (the calibration profile has no NCCL reduce-scatter and all-gather of {} ranks)", ranks);
    return std::nullopt;
  }
  return t;
}

double NcclTimes::seconds(ShardCollective kind, double shard_bytes) const {
  const Measured& measured = kind == ShardCollective::kReduceScatter ? *reduce_scatter_
                             : kind == ShardCollective::kAllGather   ? *all_gather_
                                                                     : all_reduce_.value();
  const char* name = collective_name(kind);
  const double size = shard_bytes * ranks_;  // nccl-tests' size: every rank's shard together
  return measured.fit.alpha +
         nccl_bus_bytes(name, ranks_, size) /
             (measured.fit.bus_bandwidth * measured.factor(nccl_message_bytes(name, ranks_, size)));
}

std::string NcclTimes::description() const {
  return fmt::format("nccl measured ({} ranks: reduce_scatter, all_gather{})", ranks_,
                     all_reduce_ ? ", all_reduce" : "");
}

}  // namespace semsim
