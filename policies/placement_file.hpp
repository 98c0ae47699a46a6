#pragma once
// The placement file, version 2 (policies/PLACEMENT_FORMAT.md; version 1 files are read too): a readable text
// form of a PlacementPlan, gzip-compressed when the name ends in ".gz".
#include <string>

#include "policies/placement_plan.hpp"

namespace semsim {

inline constexpr int kPlacementFormatVersion = 2;

// Writes `path` as it goes: a command writes a staged file and renames it into place once whole.
// Floats are written in their shortest exact form, so reading gives back an equal plan.
void write_placement_file(const PlacementPlan& plan, const std::string& path);

// Reads and validates a placement file; InputError("FILE:LINE: message") on any defect.
PlacementPlan read_placement_file(const std::string& path);

}  // namespace semsim
