// BenchContext, the plan file and the grids.
#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/check.hpp"
#include "calibrate/format/shape_words.hpp"

namespace semsim::bench {

BenchContext::BenchContext(int device_index, bool quick_grids) : device(device_index), quick(quick_grids) {
  SEMSIM_CUDA(cudaSetDevice(device));
  SEMSIM_CUDA(cudaGetDeviceProperties(&properties, device));
  fp8 = properties.major * 10 + properties.minor >= 89;
  SEMSIM_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  SEMSIM_CUBLAS(cublasCreate(&blas));
  SEMSIM_CUBLAS(cublasSetStream(blas, stream));
  SEMSIM_CUBLAS(cublasLtCreate(&lt));
  SEMSIM_CUDA(cudaMalloc(&lt_workspace, lt_workspace_bytes));
}

BenchContext::~BenchContext() {
  cudaFree(lt_workspace);
  cublasLtDestroy(lt);
  cublasDestroy(blas);
  cudaStreamDestroy(stream);
}

long long PlanLine::value(const std::string& key) const {
  if (const auto v = shape_value(shape, key)) return *v;
  throw std::invalid_argument("plan: " + kernel + " '" + shape + "' has no " + key);
}

bool PlanLine::has_word(const std::string& word) const {
  return shape_has_word(shape, word);
}

std::vector<PlanLine> read_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read the plan '" + path + "'");
  std::vector<PlanLine> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with("#")) continue;
    const auto space = line.find(' ');
    lines.push_back({line.substr(0, space), space == std::string::npos ? "" : line.substr(space + 1)});
  }
  return lines;
}

std::vector<long long> powers_of_two(long long first, long long last, bool quick) {
  std::vector<long long> values;
  for (long long v = first; v < last; v *= quick ? 4 : 2) values.push_back(v);
  values.push_back(last);
  return values;
}

std::vector<BenchGroup> suite_groups(BenchContext& context, const std::vector<PlanLine>& plan) {
  std::vector<BenchGroup> groups;
  groups.push_back(copy_group(context));
  for (const PlanLine& line : plan)
    for (auto* family : {&gemm_groups, &attention_groups, &token_groups})
      for (BenchGroup& group : family(context, line)) groups.push_back(std::move(group));
  return groups;
}

}  // namespace semsim::bench
