#include "sim/cost_model.hpp"

#include <algorithm>

namespace semsim {

double attention_with_elementwise(const CostModel& cost, int layer, std::span<const SequenceChunk> batch) {
  long long tokens = 0;
  for (const SequenceChunk& chunk : batch) tokens += std::max(chunk.new_tokens, 0);
  return cost.attention(layer, batch) + cost.elementwise(ElementwiseSite::kAroundAttention, tokens);
}

double dense_ffn_with_elementwise(const CostModel& cost, long long tokens) {
  return cost.dense_ffn(tokens) + cost.elementwise(ElementwiseSite::kDenseFfn, tokens);
}

double shared_experts_with_elementwise(const CostModel& cost, long long tokens) {
  return cost.shared_experts(tokens) + cost.elementwise(ElementwiseSite::kSharedExperts, tokens);
}

double lm_head_with_elementwise(const CostModel& cost, long long tokens) {
  return cost.lm_head(tokens) + cost.elementwise(ElementwiseSite::kFinalNorm, tokens);
}

RooflineCostModel::RooflineCostModel(const MoeModel& model, const Device& device,
                                     const CalibrationProfile& profile, const Precision& precision)
    : model_(model),
      precision_(precision),
      kernel_overhead_(profile.kernel_overhead),
      collective_overhead_(profile.collective_overhead) {
  gemm_flops_ = peak_flops(precision.weights, device) * profile.gemm_efficiency;
  expert_flops_ = peak_flops(precision.experts, device) * profile.gemm_efficiency;
  attention_flops_ = device.bf16_flops * profile.attention_efficiency;
  memory_bandwidth_ = device.hbm_bandwidth * profile.memory_efficiency;
}

double RooflineCostModel::seconds(const OpCost& cost, KernelKind kind) const {
  if (cost.flops <= 0 && cost.bytes <= 0) return 0.0;
  const double flops_rate = kind == KernelKind::kAttention ? attention_flops_ : gemm_flops_;
  const double compute = kind == KernelKind::kMemoryBound ? 0.0 : cost.flops / flops_rate;
  return kernel_overhead_ + std::max(compute, cost.bytes / memory_bandwidth_);
}

double RooflineCostModel::attention(int layer, std::span<const SequenceChunk> batch) const {
  return seconds(attention_cost(model_, layer, batch, precision_), KernelKind::kAttention);
}

double RooflineCostModel::gate(long long tokens) const {
  return seconds(gate_cost(model_, tokens, precision_), KernelKind::kGemm);
}

double RooflineCostModel::routed_experts(std::span<const int> tokens_per_expert) const {
  const OpCost cost = routed_experts_cost(model_, tokens_per_expert, precision_);
  if (cost.flops <= 0 && cost.bytes <= 0) return 0.0;
  return kernel_overhead_ + std::max(cost.flops / expert_flops_, cost.bytes / memory_bandwidth_);
}

double RooflineCostModel::shared_experts(long long tokens) const {
  return seconds(shared_experts_cost(model_, tokens, precision_), KernelKind::kGemm);
}

double RooflineCostModel::dense_ffn(long long tokens) const {
  return seconds(dense_ffn_cost(model_, tokens, precision_), KernelKind::kGemm);
}

double RooflineCostModel::lm_head(long long tokens) const {
  return seconds(lm_head_cost(model_, tokens, precision_), KernelKind::kGemm);
}

double RooflineCostModel::elementwise(ElementwiseSite site, long long tokens) const {
  const ElementwiseWork work = elementwise_work(model_, site, tokens, precision_);
  return work.kernels * kernel_overhead_ + work.bytes / memory_bandwidth_;
}

double RooflineCostModel::permute_tokens(long long tokens) const {
  return seconds(token_permutation_cost(model_, tokens, precision_), KernelKind::kMemoryBound);
}

}  // namespace semsim
