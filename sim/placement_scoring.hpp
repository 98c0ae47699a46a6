#pragma once
// The pricing a cost-scored placement (policies/cost_scored_placement.hpp) scores plans with, built
// from a scenario as its run prices a step's MoE layer: the routed experts by the calibrated cost
// model, the dispatch and combine by the dispatch kernel's measured tables or the copies over the
// topology (each as it would run alone), and the sample served by the scenario's schedulers at its
// load.
#include <memory>

#include "policies/cost_scored_placement.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "sim/collective_pricing.hpp"
#include "sim/dispatch_timing.hpp"
#include "sim/scenario.hpp"

namespace semsim {

class ScenarioLayerPricer final : public MoeLayerPricer {
 public:
  explicit ScenarioLayerPricer(const Scenario& scenario);
  DispatchMode traffic(bool decode_only) override;
  double experts_seconds(std::span<const int> tokens_per_local_expert) override;
  double exchange_seconds(std::span<const long long> copies, bool decode_only) override;

 private:
  MoeModel expert_model_;
  std::unique_ptr<CalibratedCostModel> cost_;
  Topology topology_;
  DispatchTiming dispatch_;
  CollectivePricing pricing_;
  LoneCollectiveTime network_;
};

struct ScenarioPlacementScoring {
  std::unique_ptr<ScenarioLayerPricer> pricer;
  PlacementScoring scoring;  // points at *pricer
};

// The scenario's pricing: its attention mode, request scheduler, replica choice and output lengths;
// its load, in a closed loop, the concurrency (at most what the ranks admit), else none (the policy
// then needs its in_flight parameter). InputError when the scenario's token scheduling is not the
// positional one (Sem-MoE's reshuffle is not priced).
ScenarioPlacementScoring placement_scoring(const Scenario& scenario);

}  // namespace semsim
