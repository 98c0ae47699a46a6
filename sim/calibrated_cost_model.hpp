#pragma once
// The cost model of a calibration profile. Each operator is priced, in this order of preference:
// 1. from the profile's operator table for the model's shape (the project's own microbenchmarks
//    measure those per model preset);
// 2. composed from its kernel tables (public per-kernel databases measure those over many shapes):
//    projections, FFNs, the router and the LM head as the GEMMs they are made of, the routed
//    experts from the fused MoE kernel, attention from the MLA or GQA kernel, each the table of the
//    exact shape or the cross-shape model over the nearest measured ones (kernel_library.hpp);
// 3. from the roofline with the profile's efficiencies.
// A profile without tables is the roofline. coverage() says which each operator got.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/fit/kernel_library.hpp"
#include "sim/cost_model.hpp"
#include "sim/integer_memo.hpp"

namespace semsim {

struct OperatorCoverage {
  std::string name;  // attention projections, attention decode, ...
  Coverage coverage = Coverage::kRoofline;
  std::string source;  // the tables it comes from
};

class CalibratedCostModel final : public CostModel {
 public:
  // Queries far outside a table's grid are InputErrors unless `allow_extrapolation`.
  // `experts_see_whole_batch`: each EP rank's experts are given every token of the group (the
  // allgather dispatch), as the fused MoE kernel's EP rows were measured; otherwise only the copies
  // routed to them.
  CalibratedCostModel(const MoeModel& model, const Device& device, const CalibrationProfile& profile,
                      const Precision& precision, bool allow_extrapolation,
                      bool experts_see_whole_batch = false);
  ~CalibratedCostModel() override;

  // Projections, plus one decode kernel over the batch's single-token chunks (at their mean
  // visible context) and one prefill kernel per longer chunk.
  double attention(int layer, std::span<const SequenceChunk> batch) const override;
  double gate(long long tokens) const override;
  // At (active experts, token copies) of the device's local histogram.
  double routed_experts(std::span<const int> tokens_per_expert) const override;
  double shared_experts(long long tokens) const override;
  double dense_ffn(long long tokens) const override;
  double lm_head(long long tokens) const override;
  // No profile measures the shuffle on its own: the roofline's memory-bound gather.
  double permute_tokens(long long tokens) const override { return roofline_.permute_tokens(tokens); }
  double elementwise(ElementwiseSite site, long long tokens) const override {
    return roofline_.elementwise(site, tokens);
  }
  double collective_overhead() const override { return roofline_.collective_overhead(); }

  std::vector<OperatorCoverage> coverage() const;

  class Operator;  // one operator's pricing (calibrated_cost_model.cpp)

 private:
  double prefill_chunk(int new_tokens, long long visible_prior) const;

  const MoeModel& model_;
  Precision precision_;
  RooflineCostModel roofline_;
  KernelLibrary library_;
  std::unique_ptr<Operator> projections_, decode_, prefill_, gate_, routed_, shared_, dense_, head_;
  bool prefill_from_prompts_ = false;  // prefill_ is a kernel table of prompts without a cached prefix
  mutable IntegerMemo routed_memo_;    // the routed experts' seconds [active experts][token copies]
};

}  // namespace semsim
