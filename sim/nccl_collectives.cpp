#include "sim/nccl_collectives.hpp"

#include <fmt/format.h>

#include "calibrate/fit/fit.hpp"

namespace semsim {
namespace {

// The profile's names of the collectives, by ShardCollective.
constexpr std::array<const char*, 3> kCollectiveNames{"reduce_scatter", "all_gather", "all_reduce"};

}  // namespace

std::optional<NcclTimes> NcclTimes::make(const CalibrationProfile& profile, int ranks, int devices_per_node,
                                         std::string& why_not) {
  // A group across nodes is timed by fits measured across nodes (scale-out), of its own rank count.
  const bool across_nodes = ranks > devices_per_node;
  const char* level = across_nodes ? "scaleout" : "scaleup";
  NcclTimes t;
  t.ranks_ = ranks;
  t.across_nodes_ = across_nodes;
  for (const CollectiveFit& fit : profile.collectives) {
    if (fit.level != level || fit.ranks != ranks) continue;
    for (std::size_t kind = 0; kind < kCollectiveNames.size(); ++kind)
      if (fit.collective == kCollectiveNames[kind])
        t.measured_[kind].emplace(Measured{fit, BandwidthFactor(fit)});
  }
  if (!t.measured_[static_cast<int>(ShardCollective::kReduceScatter)] ||
      !t.measured_[static_cast<int>(ShardCollective::kAllGather)]) {
    why_not = across_nodes ? fmt::format(
                                 "topology (this group of {} spans nodes of {}, and the calibration profile "
                                 "has no NCCL reduce-scatter and all-gather of {} ranks across nodes)",
                                 ranks, devices_per_node, ranks)
                           : fmt::format(
                                 "topology (the calibration profile has no NCCL reduce-scatter and "
                                 "all-gather of {} ranks)",
                                 ranks);
    return std::nullopt;
  }
  return t;
}

double NcclTimes::seconds(ShardCollective kind, double shard_bytes) const {
  const Measured& measured = measured_[static_cast<int>(kind)].value();
  const char* name = kCollectiveNames[static_cast<int>(kind)];
  const double size = shard_bytes * ranks_;  // nccl-tests' size: every rank's shard together
  return measured.fit.alpha +
         nccl_bus_bytes(name, ranks_, size) /
             (measured.fit.bus_bandwidth * measured.factor(nccl_message_bytes(name, ranks_, size)));
}

std::string NcclTimes::description() const {
  return fmt::format("nccl measured ({} ranks{}: reduce_scatter, all_gather{})", ranks_,
                     across_nodes_ ? " across nodes" : "", has_all_reduce() ? ", all_reduce" : "");
}

}  // namespace semsim
