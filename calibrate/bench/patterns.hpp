#pragma once
// Data checks of the collectives (as nccl-tests does): every buffer a collective sends holds a
// pattern the receiver can recompute, and after the timed iterations the receiver counts the
// elements that differ. Byte patterns for the moves (all-to-all, all-gather, send/recv); 0s and 1s
// in BF16 for the reductions, whose sums stay exact in BF16 (integers up to 256: up to 256 ranks)
// whatever order NCCL adds them in.
#include <cuda_runtime.h>

#include <cstddef>

namespace semsim::bench {

// bytes[k] = (seed + k) mod 256.
void fill_bytes(void* data, std::size_t bytes, unsigned seed, cudaStream_t stream);
// Adds to *wrong (device memory) the bytes that are not the pattern of `seed`.
void count_wrong_bytes(const void* data, std::size_t bytes, unsigned seed, unsigned long long* wrong,
                       cudaStream_t stream);

// Element i of rank r's reduction input (i counted from `first`): (r + i) mod 2 as BF16.
void fill_reduction_input(void* data, std::size_t count, long long first, int rank, cudaStream_t stream);
// Adds to *wrong the elements that are not the sum of the `ranks` inputs (ranks 0 .. ranks-1).
void count_wrong_sums(const void* data, std::size_t count, long long first, int ranks,
                      unsigned long long* wrong, cudaStream_t stream);

}  // namespace semsim::bench
