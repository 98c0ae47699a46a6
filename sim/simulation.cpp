#include "sim/simulation.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "policies/policy_registry.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "sim/dp_serving_loop.hpp"
#include "sim/platform.hpp"

namespace semsim {

Topology effective_topology(const Scenario& scenario) {
  Topology topology = Topology::build(scenario.cluster, scenario.ep);
  for (TopologyLink& link : topology.links)
    link.bandwidth *= link.level == LinkLevel::kScaleUp ? scenario.calibration.scaleup_efficiency
                                                        : scenario.calibration.scaleout_efficiency;
  return topology;
}

RunResult simulate(const Scenario& scenario, StepWindow timeline) {
  int argc = 1;
  char name[] = "semsim";
  char* argv[] = {name, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  configure_engine();
  const Topology topology = effective_topology(scenario);
  const std::vector<simgrid::s4u::Host*> hosts = build_platform(topology);

  const Placement& placement = scenario.placement_plan->placement;  // placed when the scenario was loaded
  const auto routing = make_routing_source(scenario.workload, scenario.model);
  const auto scheduler = make_request_scheduler(scenario.request_scheduling, *scenario.placement_plan);
  const auto token_scheduler =
      make_token_scheduler(scenario.token_scheduling, *scenario.placement_plan, scenario.ep);
  const CalibratedCostModel cost_model(scenario.model, scenario.cluster.device, scenario.calibration,
                                       scenario.precision, scenario.calibration_extrapolation);
  // Under Attention-TP each rank computes its shard of attention, dense FFN and LM head.
  const bool tensor_parallel = scenario.attention == AttentionMode::kTensorParallel;
  const MoeModel rank_model =
      tensor_parallel ? attention_tp_shard(scenario.model, scenario.tp) : scenario.model;
  const CalibratedCostModel rank_cost_model(rank_model, scenario.cluster.device, scenario.calibration,
                                            scenario.precision, scenario.calibration_extrapolation);
  LoneCollectiveTime network(topology, BandwidthFactors(scenario.calibration, topology));
  const ComputeUnits units{scenario.cluster.device.compute_units,
                           scenario.cluster.device.communication_units};
  const auto executor = scenario.fidelity == NetworkFidelity::kFlow
                            ? make_flow_executor(std::move(network), units, topology)
                            : make_bottleneck_executor(std::move(network), units);
  StepBuilder builder(scenario, placement, *routing, cost_model, rank_cost_model, topology, *token_scheduler);
  StepRecorder recorder(scenario.model, scenario.ep, timeline);
  StepPipeline steps(builder, *executor, recorder, scenario.ep);
  const std::vector<Request> requests = generate_requests(scenario.workload);

  RunResult result;
  simgrid::s4u::Actor::create("serving-loop", hosts.front(), [&] {
    result = serve_data_parallel(scenario, requests, *scheduler, *routing, steps);
  });
  engine.run();
  result.layers = recorder.layer_totals();
  for (std::size_t moe = 0; moe < result.layers.size(); ++moe)
    result.layers[moe].device_activations = builder.layer_loads()[moe];
  result.timeline = recorder.timeline();
  return result;
}

}  // namespace semsim
