// A profile's measured topology against a scenario's cluster: which link levels are measured, the
// hard error (nodes of another GPU count) and the notes (more nodes than measured, scale-out unused,
// NICs shared by GPUs).
#include "calibrate/format/topology_check.hpp"

#include <gtest/gtest.h>

#include "models/presets.hpp"
#include "tests/unit_test_helpers.hpp"

namespace semsim {
namespace {

using test::error_of;

CalibrationProfile measured_on(int nodes, int gpus_per_node, std::vector<const char*> levels, int nics = 8) {
  CalibrationProfile p;
  p.name = "lab-measured";
  p.provenance = ProfileProvenance{};
  p.provenance->topology = ProfileTopology{nodes, gpus_per_node, nics, {}};
  for (const char* level : levels) {
    CollectiveFit fit;
    fit.collective = "all_to_all";
    fit.level = level;
    fit.ranks = 8;
    p.collectives.push_back(fit);
  }
  return p;
}

TEST(CalibrationLinks, SayWhichLevelsWereMeasured) {
  const Cluster two = cluster_preset("h200-2x8");
  EXPECT_EQ(calibration_links(CalibrationProfile{}, two, 16), (CalibrationLinks{"preset", "preset", ""}));
  EXPECT_EQ(calibration_links(measured_on(1, 8, {"scaleup"}), two, 16),
            (CalibrationLinks{"measured", "preset", ""}));
  EXPECT_EQ(calibration_links(measured_on(2, 8, {"scaleup", "scaleout"}), two, 16),
            (CalibrationLinks{"measured", "measured", ""}));
  // A profile without topology (imported from a database) is not checked.
  CalibrationProfile imported = measured_on(1, 4, {"scaleup"});
  imported.provenance->topology.reset();
  EXPECT_EQ(calibration_links(imported, two, 16).scaleup, "measured");
}

TEST(CalibrationLinks, NodesOfAnotherGpuCountAreAnError) {
  const Cluster two = cluster_preset("h200-2x8");
  EXPECT_EQ(
      error_of([&] { calibration_links(measured_on(2, 4, {"scaleout"}), two, 16); }),
      "calibration profile 'lab-measured' measured its collectives on nodes of 4 GPUs (provenance.topology), "
      "but cluster 'h200-2x8' has 8 per node: its scale-up groups, rails and cross-node traffic differ; "
      "calibrate on nodes like the cluster's, or use a profile without collective fits");
  // Kernel tables alone do not depend on the node.
  EXPECT_EQ(calibration_links(measured_on(1, 4, {}), two, 16), (CalibrationLinks{"preset", "preset", ""}));
}

TEST(CalibrationLinks, MoreNodesThanMeasuredUnusedScaleOutAndSharedNicsAreNotes) {
  const Cluster many = cluster_preset("h200-32x8-rail");
  EXPECT_EQ(calibration_links(measured_on(2, 8, {"scaleout"}), many, 64).note,
            "scale-out measured on up to 2 nodes; this run's 8 take the fits of the largest group measured");
  EXPECT_EQ(calibration_links(measured_on(4, 8, {"scaleout"}), many, 16).note, "") << "2 of 4 measured nodes";
  EXPECT_EQ(calibration_links(measured_on(2, 8, {"scaleout"}), many, 8).note,
            "scale-out measured, unused: this run stays within one node");
  EXPECT_EQ(
      calibration_links(measured_on(2, 8, {"scaleout"}, 4), many, 16).note,
      "the measured nodes have 4 NICs for 8 GPUs; the cluster preset gives each GPU its own NIC bandwidth, "
      "scaled by the measured efficiency");
}

}  // namespace
}  // namespace semsim
