#pragma once
// How much memory semsim may use, and the one check of an estimate against it: inputs whose counts
// pass their limits (input_limits.hpp) can still ask for more than the machine has, and a refusal
// naming what needs the memory beats dying of bad_alloc (or of the OOM killer) half-way through.
#include <string>

namespace semsim {

// The bytes this process may allocate: the machine's physical memory, or less where an
// address-space or data-segment limit (ulimit -v, -d) or the cgroup's memory.max says so.
double memory_budget_bytes();

// Lowers memory_budget_bytes() for the rest of this process (never raises it): the fuzz targets
// match it to what libFuzzer lets one input allocate.
void limit_memory_budget(double bytes);

// An InputError when `bytes` (what `what` needs at the least) exceed memory_budget_bytes().
void check_memory_need(double bytes, const std::string& what);

}  // namespace semsim
