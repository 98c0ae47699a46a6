#include "calibrate/format/topology_check.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/input_error.hpp"

namespace semsim {

CalibrationLinks calibration_links(const CalibrationProfile& profile, const Cluster& cluster, int devices) {
  CalibrationLinks links;
  auto measured = [&](const char* level) {
    return std::any_of(profile.collectives.begin(), profile.collectives.end(),
                       [&](const CollectiveFit& fit) { return fit.level == level; });
  };
  if (measured("scaleup")) links.scaleup = "measured";
  if (measured("scaleout")) links.scaleout = "measured";
  if (profile.collectives.empty() || !profile.provenance || !profile.provenance->topology) return links;
  const ProfileTopology& t = *profile.provenance->topology;
  if (t.gpus_per_node != cluster.gpus_per_node)
    throw InputError(fmt::format(
        "calibration profile '{}' measured its collectives on nodes of {} GPUs (provenance.topology), but "
        "cluster '{}' has {} per node: its scale-up groups, rails and cross-node traffic differ; calibrate "
        "on "
        "nodes like the cluster's, or use a profile without collective fits",
        profile.name, t.gpus_per_node, cluster.name, cluster.gpus_per_node));
  const int nodes = (devices + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  std::vector<std::string> notes;
  if (links.scaleout == "measured" && nodes > t.nodes)
    notes.push_back(
        fmt::format("scale-out measured on up to {} nodes; this run's {} take the fits of the largest "
                    "group measured",
                    t.nodes, nodes));
  if (links.scaleout == "measured" && nodes == 1)
    notes.push_back("scale-out measured, unused: this run stays within one node");
  if (links.scaleout == "measured" && nodes > 1 && t.nics_per_node > 0 && t.nics_per_node != t.gpus_per_node)
    notes.push_back(
        fmt::format("the measured nodes have {} NICs for {} GPUs; the cluster preset gives each GPU "
                    "its own NIC bandwidth, scaled by the measured efficiency",
                    t.nics_per_node, t.gpus_per_node));
  for (const std::string& note : notes) links.note += (links.note.empty() ? "" : "; ") + note;
  return links;
}

}  // namespace semsim
