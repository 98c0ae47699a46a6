#include "sim/placement_scoring.hpp"

#include <algorithm>

#include "models/input_error.hpp"
#include "sim/collectives.hpp"
#include "sim/run_plan.hpp"

namespace semsim {

ScenarioLayerPricer::ScenarioLayerPricer(const Scenario& scenario)
    : expert_model_(expert_model(scenario)),
      cost_(cost_model(scenario, expert_model_)),
      topology_(effective_topology(scenario)),
      dispatch_(dispatch_timing(scenario)),
      pricing_(scenario, topology_, cost_->collective_overhead(), dispatch_, nullptr),
      network_(topology_, BandwidthFactors(*scenario.calibration, topology_)) {}

DispatchMode ScenarioLayerPricer::traffic(bool decode_only) {
  pricing_.start_step(decode_only);
  return pricing_.traffic();
}

double ScenarioLayerPricer::experts_seconds(std::span<const int> tokens_per_local_expert) {
  return cost_->routed_experts(tokens_per_local_expert);
}

double ScenarioLayerPricer::exchange_seconds(std::span<const long long> copies, bool decode_only) {
  pricing_.start_step(decode_only);
  const CollectivePricing::Exchanges both = pricing_.exchanges(copies);
  return alone_seconds(both.dispatch, network_) + alone_seconds(both.combine, network_);
}

ScenarioPlacementScoring placement_scoring(const Scenario& scenario) {
  ScenarioPlacementScoring out;
  out.pricer = std::make_unique<ScenarioLayerPricer>(scenario);
  PlacementScoring& scoring = out.scoring;
  scoring.pricer = out.pricer.get();
  scoring.tensor_parallel_attention = scenario.attention == AttentionMode::kTensorParallel;
  if (scoring.tensor_parallel_attention && scenario.token_scheduling.name != "positional")
    throw InputError(
        "placement policy 'cost_scored' prices Attention-TP steps in positional slices: token "
        "scheduling '" +
        scenario.token_scheduling.name + "' (its reshuffle) is not priced");
  scoring.request_scheduling = scenario.request_scheduling;
  scoring.replica_choice = scenario.replica_choice;
  scoring.output_len = scenario.workload.output_len;
  if (scenario.workload.concurrency > 0) {
    const int ranks = scoring.tensor_parallel_attention ? 1 : scenario.dp;
    scoring.in_flight =
        std::min(scenario.workload.concurrency, scenario.serving.max_running_requests * ranks);
  }
  return out;
}

}  // namespace semsim
