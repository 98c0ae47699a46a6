#pragma once
// nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf) as a
// measured table: one row per message size, its out-of-place time (the time aiconfigurator keeps
// too) as the point of collective `nccl_<op>` over the log's ranks. Sizes are bytes, times µs,
// algbw/busbw GB/s. The collective is named in the log ("Collective test starting: X_perf") or in
// the file name (all_gather_perf.log); the ranks are the "Rank" lines of "Using devices".
#include <string>

#include "calibrate/import/aiconfigurator_tables.hpp"

namespace semsim {

// InputError naming file:line:column for a malformed line, an unknown collective or no data rows.
MeasuredTable read_nccl_tests_log(const std::string& path);

}  // namespace semsim
