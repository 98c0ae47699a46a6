#pragma once
// Device memory for the microbenchmarks: an owning buffer, random fills (so that no kernel runs on
// zeros, which some hardware paths shortcut), and copies back for the correctness checks.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace semsim::bench {

enum class DType { kBf16, kFp8, kF32, kI32 };
std::size_t dtype_bytes(DType type);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // The address `offset_bytes` into the buffer.
  void* at(std::size_t offset_bytes) const { return static_cast<char*>(data_) + offset_bytes; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// `count` elements of `type` uniform in [-scale, scale] (integers: in [0, scale)), from `seed`.
void fill_random(void* data, std::size_t count, DType type, std::uint64_t seed, float scale,
                 cudaStream_t stream);

// A new buffer of `count` random elements (see fill_random).
DeviceBuffer random_buffer(std::size_t count, DType type, std::uint64_t seed, float scale,
                           cudaStream_t stream);

// Host copies of device data, as floats (bf16 and fp8 widened) or ints.
std::vector<float> to_host_floats(const void* data, std::size_t count, DType type);
std::vector<int> to_host_ints(const int* data, std::size_t count);
void to_device(void* data, const void* host, std::size_t bytes);

}  // namespace semsim::bench
