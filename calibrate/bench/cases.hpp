#pragma once
// What the suite measures, independent of how it is run: groups of cases (one group per kernel,
// shape and dtype, sharing buffers such as expert weights), each case one grid point with a
// launcher. The built-in runner (runner.hpp) and the Google Benchmark front end run the same cases.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace semsim::bench {

// The device and the library handles every case uses.
struct BenchContext {
  int device = 0;
  cudaDeviceProp properties{};
  bool fp8 = false;  // FP8 tensor cores (compute capability 8.9 and later)
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* lt_workspace = nullptr;
  std::size_t lt_workspace_bytes = 32u << 20;
  bool quick = false;  // coarse grids: a smoke test of every path

  explicit BenchContext(int device_index, bool quick_grids);
  ~BenchContext();
  BenchContext(const BenchContext&) = delete;
  BenchContext& operator=(const BenchContext&) = delete;
  std::size_t l2_bytes() const { return static_cast<std::size_t>(properties.l2CacheSize); }
};

// One row of kernels.csv.
struct CaseInfo {
  std::string kernel;          // a name from calibrate/format/kernels.hpp
  std::string shape;           // as in the plan
  std::string dtype = "bf16";  // bf16 | fp8
  std::string implementation;
  std::string variant = "grid";  // grid | skewed (a held-out check of the grid's table)
  double x = 0, y = 0;           // grid coordinates on the kernel's axes
};

// A prepared case: `launch(stream, iteration)` runs it once; `state` owns its buffers.
struct Launcher {
  std::function<void(cudaStream_t, long)> launch;
  std::shared_ptr<void> state;
};

struct BenchCase {
  CaseInfo info;
  std::function<Launcher()> prepare;  // allocates; throws Unsupported or on failure
};

struct BenchGroup {
  std::string name;
  std::vector<std::string> self_checks;  // the correctness checks (run_self_checks) its paths must pass
  std::vector<BenchCase> cases;
  std::function<void()> release;  // frees what the group's cases shared
};

// State shared by the cases of a group, made on first use and dropped by release().
template <class T>
class SharedState {
 public:
  explicit SharedState(std::function<std::unique_ptr<T>()> make) : make_(std::move(make)) {}
  T& get() {
    if (!value_) value_ = make_();
    return *value_;
  }
  void release() { value_.reset(); }

 private:
  std::function<std::unique_ptr<T>()> make_;
  std::unique_ptr<T> value_;
};

template <class T>
std::shared_ptr<SharedState<T>> shared_state(std::function<std::unique_ptr<T>()> make) {
  return std::make_shared<SharedState<T>>(std::move(make));
}

// One line of the plan: a kernel and its shape ("kind key=value ...", see calibrate/format/kernels.hpp).
struct PlanLine {
  std::string kernel;
  std::string shape;
  long long value(const std::string& key) const;  // throws when the shape has no such key
  bool has_word(const std::string& word) const;   // a bare word of the shape (e.g. "mla")
};
std::vector<PlanLine> read_plan(const std::string& path);

// Grids: powers of two from `first` to `last`, both included (`last` need not be a power of two);
// quick grids take every fourth.
std::vector<long long> powers_of_two(long long first, long long last, bool quick);

// The groups of every kernel family for one plan line (empty for kernels the suite does not know).
std::vector<BenchGroup> gemm_groups(BenchContext& context, const PlanLine& line);
std::vector<BenchGroup> attention_groups(BenchContext& context, const PlanLine& line);
std::vector<BenchGroup> token_groups(BenchContext& context, const PlanLine& line);
// Device copies (not tied to a model shape).
BenchGroup copy_group(BenchContext& context);

// Every group of the suite: device copies, then each plan line's.
std::vector<BenchGroup> suite_groups(BenchContext& context, const std::vector<PlanLine>& plan);

// Correctness checks of the paths the groups use, on small inputs against CPU references.
struct CheckResult {
  std::string name;
  double max_error = 0;
  double tolerance = 0;
  bool passed = false;
  std::string note;  // why it could not run: "unsupported: ..." (this GPU or library) or "error: ..."
};
std::vector<CheckResult> run_self_checks(BenchContext& context);

}  // namespace semsim::bench
