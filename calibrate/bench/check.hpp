#pragma once
// Error handling of the CUDA, cuBLAS(Lt) and NCCL calls: every failure throws, naming the call and
// where it was made. A configuration the library does not support throws Unsupported, which the
// runner records and moves past; anything else ends the case.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace semsim::bench {

class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_call(const char* call, const char* file, int line, const std::string& why,
                            bool unsupported);

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) fail_call(call, file, line, cudaGetErrorString(status), false);
}

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail_call(call, file, line, cublasGetStatusString(status), status == CUBLAS_STATUS_NOT_SUPPORTED);
}

// True when the device can no longer run anything (a kernel faulted): the runner stops the suite.
bool device_is_broken();

}  // namespace semsim::bench

#define SEMSIM_CUDA(call) ::semsim::bench::check_cuda((call), #call, __FILE__, __LINE__)
#define SEMSIM_CUBLAS(call) ::semsim::bench::check_cublas((call), #call, __FILE__, __LINE__)
