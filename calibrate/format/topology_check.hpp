#pragma once
// Whether a profile's collective fits describe a scenario's cluster: which link levels they measured,
// and where the machines they were measured on (provenance.topology) differ from the cluster.
#include <string>

#include "calibrate/format/profile.hpp"
#include "models/cluster.hpp"

namespace semsim {

// For summary.json: "measured" where the profile has collective fits of the level, else "preset"
// (the cluster preset's link bandwidth times the profile's efficiency); `note` says how the
// measured machines differ from the cluster in ways the fits still cover ("" when they do not).
struct CalibrationLinks {
  std::string scaleup = "preset";
  std::string scaleout = "preset";
  std::string note;
  bool operator==(const CalibrationLinks&) const = default;
};

// The links of `profile` on the first `devices` GPUs of `cluster`. An InputError when the fits
// were measured on nodes of another GPU count: the scale-up groups, the rails and the share of
// each all-to-all that leaves a node all differ. Fewer nodes than measured are covered (every node
// count from 2 up was measured); more are a note (the closest fit stands in), as are fits of a
// level the run never uses and nodes with another count of NICs than GPUs.
CalibrationLinks calibration_links(const CalibrationProfile& profile, const Cluster& cluster, int devices);

}  // namespace semsim
