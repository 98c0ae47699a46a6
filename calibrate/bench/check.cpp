#include "calibrate/bench/check.hpp"

#include <filesystem>

namespace semsim::bench {

void fail_call(const char* call, const char* file, int line, const std::string& why, bool unsupported) {
  const std::string message =
      std::filesystem::path(file).filename().string() + ":" + std::to_string(line) + ": " + call + ": " + why;
  if (unsupported) throw Unsupported(message);
  throw std::runtime_error(message);
}

bool device_is_broken() {
  // Errors from a faulting kernel are sticky: they come back from every later call.
  const cudaError_t status = cudaDeviceSynchronize();
  if (status == cudaSuccess) return false;
  cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
}

}  // namespace semsim::bench
