#include "sim/calibrated_cost_model.hpp"

#include <fmt/format.h>

#include <numeric>
#include <vector>

#include "calibrate/kernels.hpp"

namespace semsim {
namespace {

std::optional<KernelTableLookup> find_table(const CalibrationProfile& profile, const MoeModel& model,
                                            const char* kernel, const std::string& dtype,
                                            bool allow_extrapolation) {
  const std::string shape = kernel_shape(kernel, model);
  const KernelTable* table = shape.empty() ? nullptr : profile.find_kernel(kernel, shape, dtype);
  if (table == nullptr) return std::nullopt;
  return KernelTableLookup(
      *table, fmt::format("calibration profile '{}': {} '{}' {}", profile.name, kernel, shape, dtype),
      allow_extrapolation);
}

}  // namespace

CalibratedCostModel::CalibratedCostModel(const MoeModel& model, const Device& device,
                                         const CalibrationProfile& profile, const Precision& precision,
                                         bool allow_extrapolation)
    : model_(model), precision_(precision), roofline_(model, device, profile, precision) {
  // Weight GEMMs run in FP8 where the roofline prices them at FP8 peak; the router and the token
  // shuffles stay in BF16 as serving engines run them.
  const std::string gemm = precision.weight_bytes < 2.0 && device.fp8_flops > 0 ? "fp8" : "bf16";
  const std::string kv = precision.kv_bytes < 2.0 ? "fp8" : "bf16";
  auto table = [&](const char* kernel, const std::string& dtype) {
    return find_table(profile, model, kernel, dtype, allow_extrapolation);
  };
  projections_ = table("attention_projections", gemm);
  decode_ = table("attention_decode", kv);
  prefill_ = table("attention_prefill", kv);
  gate_ = table("gate", "bf16");
  routed_ = table("routed_experts", gemm);
  permute_ = table("token_permute", "bf16");
  unpermute_ = table("token_unpermute", "bf16");
  shared_ = table("shared_experts", gemm);
  dense_ = table("dense_ffn", gemm);
  head_ = table("lm_head", gemm);
}

double CalibratedCostModel::attention(int layer, std::span<const SequenceChunk> batch) const {
  if (!projections_ && !decode_ && !prefill_) return roofline_.attention(layer, batch);
  long long tokens = 0, decode_context = 0;
  std::vector<SequenceChunk> decodes, prefills;  // for the parts the profile has no table of
  double seconds = 0;
  for (const SequenceChunk& chunk : batch) {
    if (chunk.new_tokens <= 0) continue;
    tokens += chunk.new_tokens;
    const long long visible = visible_prior_context(model_, layer, chunk.prior_context);
    if (chunk.new_tokens == 1) {
      decodes.push_back(chunk);
      decode_context += visible + 1;
    } else if (prefill_) {
      seconds += prefill_->seconds(chunk.new_tokens, static_cast<double>(visible + chunk.new_tokens));
    } else {
      prefills.push_back(chunk);
    }
  }
  if (tokens == 0) return 0.0;
  seconds += projections_ ? projections_->seconds(static_cast<double>(tokens))
                          : roofline_.seconds(attention_projection_cost(model_, tokens, precision_),
                                              KernelKind::kGemm);
  if (!decodes.empty()) {
    const auto sequences = static_cast<double>(decodes.size());
    seconds += decode_ ? decode_->seconds(sequences, static_cast<double>(decode_context) / sequences)
                       : roofline_.seconds(attention_core_cost(model_, layer, decodes, precision_),
                                           KernelKind::kAttention);
  }
  if (!prefills.empty())
    seconds +=
        roofline_.seconds(attention_core_cost(model_, layer, prefills, precision_), KernelKind::kAttention);
  return seconds;
}

double CalibratedCostModel::routed_experts(std::span<const int> tokens_per_expert) const {
  if (!routed_) return roofline_.routed_experts(tokens_per_expert);
  const long long tokens = std::accumulate(tokens_per_expert.begin(), tokens_per_expert.end(), 0LL);
  const auto active =
      std::count_if(tokens_per_expert.begin(), tokens_per_expert.end(), [](int t) { return t > 0; });
  if (tokens <= 0) return 0.0;
  const auto rows = static_cast<double>(tokens);
  return routed_->seconds(static_cast<double>(active), rows) + (permute_ ? permute_->seconds(rows) : 0.0) +
         (unpermute_ ? unpermute_->seconds(rows) : 0.0);
}

double CalibratedCostModel::by_tokens(const Table& table, long long tokens,
                                      double (RooflineCostModel::*roofline)(long long) const) const {
  if (tokens <= 0 || !table) return (roofline_.*roofline)(tokens);
  return table->seconds(static_cast<double>(tokens));
}

}  // namespace semsim
