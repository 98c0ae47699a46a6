#pragma once
// The cost model of a calibration profile: each operator from the profile's measured tables for the
// model's shapes (calibrate/kernels.hpp names them) where the profile has them, from the roofline
// with the profile's efficiencies where it does not. A profile without tables is the roofline.
#include <optional>

#include "calibrate/interpolation.hpp"
#include "sim/cost_model.hpp"

namespace semsim {

class CalibratedCostModel final : public CostModel {
 public:
  // Queries far outside a table's grid are InputErrors unless `allow_extrapolation`.
  CalibratedCostModel(const MoeModel& model, const Device& device, const CalibrationProfile& profile,
                      const Precision& precision, bool allow_extrapolation);

  // Projections, plus one decode kernel over the batch's single-token chunks (at their mean
  // visible context) and one prefill kernel per longer chunk.
  double attention(int layer, std::span<const SequenceChunk> batch) const override;
  double gate(long long tokens) const override { return by_tokens(gate_, tokens, &RooflineCostModel::gate); }
  // The grouped GEMM at (active experts, tokens), plus permuting the tokens in and out when the
  // profile measured that too.
  double routed_experts(std::span<const int> tokens_per_expert) const override;
  double shared_experts(long long tokens) const override {
    return by_tokens(shared_, tokens, &RooflineCostModel::shared_experts);
  }
  double dense_ffn(long long tokens) const override {
    return by_tokens(dense_, tokens, &RooflineCostModel::dense_ffn);
  }
  double lm_head(long long tokens) const override {
    return by_tokens(head_, tokens, &RooflineCostModel::lm_head);
  }
  // No profile measures the shuffle on its own: the roofline's memory-bound gather.
  double permute_tokens(long long tokens) const override { return roofline_.permute_tokens(tokens); }
  double collective_overhead() const override { return roofline_.collective_overhead(); }

 private:
  using Table = std::optional<KernelTableLookup>;
  // A one-axis (tokens) operator: its table, or the roofline's price when the profile has none.
  double by_tokens(const Table& table, long long tokens,
                   double (RooflineCostModel::*roofline)(long long) const) const;

  const MoeModel& model_;
  Precision precision_;
  RooflineCostModel roofline_;
  Table projections_, decode_, prefill_, gate_, routed_, permute_, unpermute_, shared_, dense_, head_;
};

}  // namespace semsim
