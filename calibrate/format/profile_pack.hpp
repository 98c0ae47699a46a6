#pragma once
// Profiles packed for embedding in the binary: the profile's fields as their bytes, written at build
// time from a profile file that from_yaml has checked, and read back without checks. A measured
// profile is megabytes of YAML whose reading would cost every run half a second (yaml-cpp scans
// about 10 MB/s) and JSON a tenth of that; its packed form is a copy of its numbers (milliseconds).
#include <string>
#include <string_view>

#include "calibrate/format/profile.hpp"

namespace semsim {

std::string pack_profile(const CalibrationProfile& profile);
// What pack_profile wrote; anything else is a build defect (std::logic_error), not an input error.
CalibrationProfile unpack_profile(std::string_view packed);

}  // namespace semsim
