#include "sim/simulation.hpp"

#include <exception>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "models/sanitizers.hpp"
#include "policies/policy_registry.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "sim/dp_serving_loop.hpp"
#include "sim/platform.hpp"

namespace semsim {

RunResult simulate(const Scenario& scenario, const RunPlan& run, StepWindow timeline,
                   const ServingProgress& progress) {
  char name[] = "semsim";
  // AddressSanitizer cannot follow the stack switches of SimGrid's own contexts (Debian's SimGrid
  // does not announce them to it): under it, actors run as threads, a choice made as the engine
  // starts (quietly: its log is off before the option is read).
  char quiet[] = "--log=root.thresh:critical";
  char thread_contexts[] = "--cfg=contexts/factory:thread";
  char* argv[] = {name, quiet, thread_contexts, nullptr};
  int argc = kAddressSanitizer ? 3 : 1;
  simgrid::s4u::Engine engine(&argc, argv);
  configure_engine();
  const Topology& topology = run.topology;
  const std::vector<simgrid::s4u::Host*> hosts = build_platform(topology);

  LoneCollectiveTime network(topology, BandwidthFactors(*scenario.calibration, topology));
  const ComputeUnits units{scenario.cluster.device.compute_units,
                           scenario.cluster.device.communication_units};
  const auto executor = scenario.fidelity == NetworkFidelity::kFlow
                            ? make_flow_executor(std::move(network), units, topology)
                            : make_bottleneck_executor(std::move(network), units);
  StepBuilder builder(scenario, run.placement->placement, *run.routing, *run.cost, *run.rank_cost, topology,
                      *run.token_scheduler, run.deepep ? &*run.deepep : nullptr,
                      run.nccl ? &*run.nccl : nullptr);
  StepRecorder recorder(scenario.model, scenario.ep, timeline);
  StepPipeline steps(builder, *executor, recorder, scenario.ep);
  const std::vector<Request> requests = generate_requests(scenario.workload);

  RunResult result;
  // An error mid-run (bad input such as a calibration query far outside its grid, or any other) ends
  // the actor; SimGrid would abort on an exception crossing it, so it is carried out and thrown once
  // the engine stops, keeping its kind.
  std::exception_ptr failure;
  simgrid::s4u::Actor::create("serving-loop", hosts.front(), [&] {
    try {
      result = serve_data_parallel(scenario, run.memory.kv_capacity_tokens, requests, *run.request_scheduler,
                                   *run.routing, steps, progress);
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // SimGrid's own unwinding of a killed actor
    } catch (...) {
      failure = std::current_exception();
    }
  });
  engine.run();
  if (failure) std::rethrow_exception(failure);
  result.layers = recorder.layer_totals();
  for (std::size_t moe = 0; moe < result.layers.size(); ++moe)
    result.layers[moe].device_activations = builder.layer_loads()[moe];
  result.timeline = recorder.timeline();
  result.notes = run.notes;
  return result;
}

}  // namespace semsim
