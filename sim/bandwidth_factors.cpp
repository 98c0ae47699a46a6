// BandwidthFactors (declared in network.hpp with the fidelities that apply them).
#include <cmath>
#include <stdexcept>

#include "sim/network.hpp"

namespace semsim {
namespace {

const CollectiveFit* closest_fit(const CalibrationProfile& profile, const char* level, int group) {
  const CollectiveFit* best = nullptr;
  auto distance = [&](const CollectiveFit& fit) {
    return std::abs(std::log(static_cast<double>(fit.ranks) / group));
  };
  for (const CollectiveFit& fit : profile.collectives) {
    if (fit.collective != "all_to_all" || fit.level != level) continue;
    // Closest in ratio; of two as close, the larger group (more contention, as in serving).
    if (!best || distance(fit) < distance(*best) ||
        (distance(fit) == distance(*best) && fit.ranks > best->ranks))
      best = &fit;
  }
  return best;
}

std::optional<BandwidthFactor> factor_of(const CollectiveFit* fit) {
  if (!fit) return std::nullopt;
  return BandwidthFactor(*fit);
}

}  // namespace

double all_to_all_overhead(const CalibrationProfile& profile, const Topology& topology, double within_node) {
  if (topology.devices <= topology.devices_per_node) return within_node;
  const CollectiveFit* across = closest_fit(profile, "scaleout", topology.devices);
  return across ? across->alpha : within_node;
}

BandwidthFactors::BandwidthFactors(const CalibrationProfile& profile, const Topology& topology)
    : scale_up_(
          factor_of(closest_fit(profile, "scaleup", std::min(topology.devices, topology.devices_per_node)))),
      scale_out_(factor_of(closest_fit(profile, "scaleout", topology.devices))),
      scaled_(topology.devices) {
  for (int src = 0; src < topology.devices; ++src)
    for (int dst = 0; dst < topology.devices; ++dst) same_node_.push_back(topology.same_node(src, dst));
}

const TrafficMatrix& BandwidthFactors::apply(const TrafficMatrix& traffic) {
  if (empty()) return traffic;
  if (traffic.bytes.size() != same_node_.size())
    throw std::invalid_argument("bandwidth factors: traffic matrix of another size than the topology");
  scaled_.devices = traffic.devices;
  scaled_.bytes.resize(traffic.bytes.size());
  for (std::size_t pair = 0; pair < traffic.bytes.size(); ++pair) {
    const double bytes = traffic.bytes[pair];
    const std::optional<BandwidthFactor>& factor = same_node_[pair] ? scale_up_ : scale_out_;
    scaled_.bytes[pair] = bytes > 0 && factor ? bytes / (*factor)(bytes) : bytes;
  }
  return scaled_;
}

}  // namespace semsim
