#pragma once
// From the microbenchmarks' raw results (calibrate/bench writes them) to a measured profile: every
// kernel table and collective fit the samples allow, the roofline's efficiencies and overheads
// derived from the same samples, and where it all came from.
#include <string>

#include "calibrate/format/profile.hpp"
#include "calibrate/import/raw_results.hpp"

namespace semsim {

// The GPU name the benchmark recorded in `raw_dir` (rank 0's in a multi-process run).
std::string raw_gpu_name(const std::string& raw_dir);

// The device preset a CUDA device name stands for (the one whose display name shares the most
// words with it); InputError when none or several fit equally.
std::string device_preset_for_gpu(const std::string& gpu_name);

// Fits the samples in `raw_dir` (either layout of raw_results.hpp; a multi-process run's ranks
// merged) for `device`: scale-up fits from collectives within a node, scale-out fits, and
// efficiency.scaleout, from those across nodes. Rows that failed, were skipped or did not pass their
// correctness checks are left out; kernels and collectives without enough samples get no table or
// fit (the engine prices them with the roofline). Malformed files are InputErrors naming file:line.
CalibrationProfile fit_measured_profile(const std::string& raw_dir, const Device& device);

}  // namespace semsim
