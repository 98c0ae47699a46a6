#include <algorithm>
#include <utility>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/memory.hpp"

namespace semsim::bench {
namespace {

// SplitMix64: a cheap, well-mixed hash of (seed, index), so fills are reproducible and parallel.
__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__global__ void fill_kernel(void* data, std::size_t count, DType type, std::uint64_t seed, float scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t bits = mix(seed ^ (i * 0x2545f4914f6cdd1dULL));
    const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    const float value = (2.0f * unit - 1.0f) * scale;
    switch (type) {
      case DType::kBf16:
        static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16(value);
        break;
      case DType::kFp8:
        static_cast<__nv_fp8_e4m3*>(data)[i] = __nv_fp8_e4m3(value);
        break;
      case DType::kF32:
        static_cast<float*>(data)[i] = value;
        break;
      case DType::kI32:
        static_cast<int*>(data)[i] = static_cast<int>(unit * scale);
        break;
    }
  }
}

}  // namespace

std::size_t dtype_bytes(DType type) {
  switch (type) {
    case DType::kBf16:
      return 2;
    case DType::kFp8:
      return 1;
    default:
      return 4;
  }
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) SEMSIM_CUDA(cudaMalloc(&data_, bytes));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(bytes_, other.bytes_);
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

void fill_random(void* data, std::size_t count, DType type, std::uint64_t seed, float scale,
                 cudaStream_t stream) {
  if (count == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 65535));
  fill_kernel<<<blocks, 256, 0, stream>>>(data, count, type, seed, scale);
  SEMSIM_CUDA(cudaGetLastError());
}

DeviceBuffer random_buffer(std::size_t count, DType type, std::uint64_t seed, float scale,
                           cudaStream_t stream) {
  DeviceBuffer buffer(count * dtype_bytes(type));
  fill_random(buffer.get(), count, type, seed, scale, stream);
  return buffer;
}

std::vector<float> to_host_floats(const void* data, std::size_t count, DType type) {
  std::vector<char> raw(count * dtype_bytes(type));
  SEMSIM_CUDA(cudaMemcpy(raw.data(), data, raw.size(), cudaMemcpyDeviceToHost));
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    switch (type) {
      case DType::kBf16:
        out[i] = __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(raw.data())[i]);
        break;
      case DType::kFp8:
        out[i] = static_cast<float>(reinterpret_cast<const __nv_fp8_e4m3*>(raw.data())[i]);
        break;
      case DType::kF32:
        out[i] = reinterpret_cast<const float*>(raw.data())[i];
        break;
      case DType::kI32:
        out[i] = static_cast<float>(reinterpret_cast<const int*>(raw.data())[i]);
        break;
    }
  }
  return out;
}

std::vector<int> to_host_ints(const int* data, std::size_t count) {
  std::vector<int> out(count);
  SEMSIM_CUDA(cudaMemcpy(out.data(), data, count * sizeof(int), cudaMemcpyDeviceToHost));
  return out;
}

void to_device(void* data, const void* host, std::size_t bytes) {
  SEMSIM_CUDA(cudaMemcpy(data, host, bytes, cudaMemcpyHostToDevice));
  // From pageable memory cudaMemcpy may return before the DMA lands, on the legacy stream, which the
  // suite's non-blocking streams do not wait for.
  SEMSIM_CUDA(cudaDeviceSynchronize());
}

}  // namespace semsim::bench
