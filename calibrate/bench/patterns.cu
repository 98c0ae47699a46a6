#include <cuda_bf16.h>

#include "calibrate/bench/patterns.hpp"

namespace semsim::bench {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t count) {
  const std::size_t wanted = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 4096 ? (wanted > 0 ? wanted : 1) : 4096);
}

__device__ float reduction_sum(long long index, int ranks) {
  float sum = 0;
  for (int r = 0; r < ranks; ++r) sum += static_cast<float>((r + index) % 2);
  return sum;
}

__global__ void fill_bytes_kernel(unsigned char* data, std::size_t bytes, unsigned seed) {
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[k] = static_cast<unsigned char>((seed + k) & 0xff);
}

__global__ void count_bytes_kernel(const unsigned char* data, std::size_t bytes, unsigned seed,
                                   unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < bytes;
       k += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    mine += data[k] != static_cast<unsigned char>((seed + k) & 0xff);
  if (mine) atomicAdd(wrong, mine);
}

__global__ void fill_reduction_kernel(__nv_bfloat16* data, std::size_t count, long long first, int rank) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = __float2bfloat16(static_cast<float>((rank + first + static_cast<long long>(i)) % 2));
}

__global__ void count_sums_kernel(const __nv_bfloat16* data, std::size_t count, long long first, int ranks,
                                  unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    mine += __bfloat162float(data[i]) != reduction_sum(first + static_cast<long long>(i), ranks);
  if (mine) atomicAdd(wrong, mine);
}

}  // namespace

void fill_bytes(void* data, std::size_t bytes, unsigned seed, cudaStream_t stream) {
  fill_bytes_kernel<<<blocks_for(bytes), kThreads, 0, stream>>>(static_cast<unsigned char*>(data), bytes,
                                                                seed);
}

void count_wrong_bytes(const void* data, std::size_t bytes, unsigned seed, unsigned long long* wrong,
                       cudaStream_t stream) {
  count_bytes_kernel<<<blocks_for(bytes), kThreads, 0, stream>>>(static_cast<const unsigned char*>(data),
                                                                 bytes, seed, wrong);
}

void fill_reduction_input(void* data, std::size_t count, long long first, int rank, cudaStream_t stream) {
  fill_reduction_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count,
                                                                    first, rank);
}

void count_wrong_sums(const void* data, std::size_t count, long long first, int ranks,
                      unsigned long long* wrong, cudaStream_t stream) {
  count_sums_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(data),
                                                                count, first, ranks, wrong);
}

}  // namespace semsim::bench
