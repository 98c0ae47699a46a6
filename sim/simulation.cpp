#include "sim/simulation.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "policies/request_scheduling.hpp"
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
  const CalibratedCostModel cost_model(scenario.model, scenario.cluster.device, scenario.calibration,
                                       scenario.precision, scenario.calibration_extrapolation);
  // Under Attention-TP each rank computes its shard of attention, dense FFN and LM head.
  const bool tensor_parallel = scenario.attention == AttentionMode::kTensorParallel;
  const MoeModel rank_model =
      tensor_parallel ? attention_tp_shard(scenario.model, scenario.tp) : scenario.model;
  const CalibratedCostModel rank_cost_model(rank_model, scenario.cluster.device, scenario.calibration,
                                            scenario.precision, scenario.calibration_extrapolation);
  BandwidthFactors factors(scenario.calibration, topology);
  const auto network = scenario.fidelity == NetworkFidelity::kFlow
                           ? make_flow_network(topology, std::move(factors))
                           : make_bottleneck_network(topology, std::move(factors));
  StepCost step_cost(scenario, placement, *routing, cost_model, rank_cost_model, *network, topology,
                     timeline);
  const std::vector<Request> requests = generate_requests(scenario.workload);

  RunResult result;
  simgrid::s4u::Actor::create("serving-loop", hosts.front(), [&] {
    result = serve_data_parallel(scenario, requests, *scheduler, *routing, step_cost);
  });
  engine.run();
  result.layers = step_cost.layer_totals();
  result.timeline = step_cost.timeline();
  return result;
}

}  // namespace semsim
