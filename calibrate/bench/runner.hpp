#pragma once
// The built-in runner: every case of every group, timed with CUDA events (timing.hpp), one row of
// kernels.csv each, within a time budget (a group may run until only a small reserve is left for
// each group after it; cases past that are recorded as skipped). Groups whose correctness checks
// did not pass are recorded, not timed.
#include <set>
#include <string>
#include <vector>

#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/report.hpp"
#include "calibrate/bench/timing.hpp"

namespace semsim::bench {

extern const std::vector<std::string> kKernelColumns;

// Returns false when the device broke (a kernel faulted) and nothing more can run.
bool run_groups(BenchContext& context, std::vector<BenchGroup>& groups,
                const std::set<std::string>& passed_checks, double seconds, const TimingOptions& timing,
                CsvWriter& csv, const Progress& progress);

}  // namespace semsim::bench
