#pragma once
// NCCL collectives on every rank count the machine has (one process, one thread driving all local
// GPUs through ncclCommInitAll), per-rank buffers of 1 KiB .. 1 GiB, in the conventions of
// nccl-tests: algbw = bytes / time, busbw = algbw x the collective's bus factor.
#include <string>
#include <vector>

#include "calibrate/bench/report.hpp"

namespace semsim::bench {

extern const std::vector<std::string> kCollectiveColumns;

void run_collectives(int gpus, double seconds, bool quick, CsvWriter& csv, const Progress& progress);

}  // namespace semsim::bench
