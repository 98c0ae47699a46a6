#pragma once
// Per-expert token counts of the routed-experts microbenchmark. Plain C++ (no CUDA): the benchmark
// builds it, and CPU tests check it.
#include <vector>

namespace semsim {

// `tokens` over `active` experts (tokens >= active >= 1), every expert at least one token: balanced
// (equal up to one token, the extra ones first) or skewed (Zipf-like with exponent 1.2, hottest first).
std::vector<int> expert_histogram(int active, long long tokens, bool skewed);

}  // namespace semsim
