#pragma once
// A profile read back from its YAML equals the one written in every field but where each table was
// read (KernelTable::line, which a profile made in memory does not have).
#include "calibrate/format/profile.hpp"

namespace semsim::test {

inline CalibrationProfile without_table_lines(CalibrationProfile profile) {
  for (KernelTable& table : profile.kernels) table.line = 0;
  return profile;
}

}  // namespace semsim::test
