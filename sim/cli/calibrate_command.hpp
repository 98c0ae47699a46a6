#pragma once
// `semsim calibrate`: runs the CUDA/NCCL microbenchmarks (semsim-calibrate-bench) on this machine's
// GPUs and fits a measured profile from what they wrote, or fits results measured elsewhere.
#include <string>

namespace semsim {

struct CalibrateOptions {
  std::string out;         // the profile to write
  std::string raw;         // where the raw CSVs go (default: beside the profile, <profile stem>-raw/)
  std::string from_raw;    // fit these raw results instead of measuring
  std::string device;      // device preset (default: the one the GPU's name matches)
  std::string bench;       // the benchmark executable (default: semsim-calibrate-bench beside semsim)
  std::string write_plan;  // only write the kernel plan (calibrate/kernel-plan.txt) here
  double budget = 420;     // seconds for the microbenchmarks
  bool quick = false;      // coarse grids: a smoke test of every path
};

// Exit code 0; no GPU, no CUDA in this build, or bad raw results are InputErrors (exit code 2).
int calibrate_command(const CalibrateOptions& options);

}  // namespace semsim
