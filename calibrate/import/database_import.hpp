#pragma once
// From measured tables (a public database's, or nccl-tests logs) to a measured profile: a smoothed
// table per kernel, shape and dtype, a fit per collective and rank count, the roofline fallbacks
// derived from the same rows, each family's residuals on rows it did not fit, and where it all came
// from.
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"
#include "calibrate/import/aiconfigurator_tables.hpp"
#include "models/device.hpp"

namespace semsim {

struct ImportOptions {
  std::string name;       // profile name (default: "<device>-measured")
  std::string database;   // e.g. "aiconfigurator 095f58a"
  std::string collected;  // when the rows were measured, if known
  int folds = 5;          // k of the k-fold residuals
};

// Every table given, fitted for `device`. InputError when a table is malformed (nothing is
// returned then) or when the tables are for another GPU than `device`.
CalibrationProfile import_measured_tables(const std::vector<MeasuredTable>& tables, const Device& device,
                                          const ImportOptions& options);

// The implementation kept when a database timed one kernel shape with several (SGLang's default on
// Hopper first: FlashAttention 3 before Triton; of Triton's, the one dequantising an FP8 cache; of
// MXFP4 MoE kernels, those with MXFP8 activations before BF16's).
bool preferred_implementation(const std::string& a, const std::string& b);

}  // namespace semsim
