#include "sim/simulation.hpp"

#include <exception>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "models/operator_costs.hpp"
#include "policies/policy_registry.hpp"
#include "policies/token_device_table.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "sim/dp_serving_loop.hpp"
#include "sim/instance_router.hpp"
#include "sim/kv_transfer.hpp"
#include "sim/platform.hpp"
#include "sim/scenario_checks.hpp"
#include "sim/shared_links.hpp"

namespace semsim {
namespace {

// One server's engine on its part of the platform: its executor, step builder, recorder and exporter.
class Server {
 public:
  Server(const Scenario& scenario, const RunPlan& run, StepWindow timeline, FlowPlatform platform,
         StepWindow exported = {})
      : scenario_(scenario),
        run_(run),
        executor_(make_executor(scenario, run.topology, platform)),
        builder_(scenario, run.placement->placement, *run.routing, *run.cost, *run.rank_cost, run.topology,
                 *run.token_scheduler, run.dispatch, run.nccl ? &*run.nccl : nullptr, run.draft_cost.get()),
        recorder_(scenario.model, scenario.ep, timeline),
        exporter_(scenario, run.placement->placement, exported),
        host_work_(scenario.engine, scenario.calibration->engine, scenario.model.layers),
        steps_(builder_, *executor_, recorder_, scenario.ep, exported.count > 0 ? &exporter_ : nullptr,
               scenario.engine.on() ? &host_work_ : nullptr) {}

  // Starts the serving loop in an actor on `host`; an error in it is kept for rethrow_failure().
  void start(simgrid::s4u::Host* host, const std::vector<Request>& requests, const ServingProgress& progress,
             KvHandoff* handoff, RequestFeed* feed = nullptr) {
    simgrid::s4u::Actor::create(std::string("serving-") + serving_pool_name(scenario_.serving.pool), host,
                                [this, &requests, &progress, handoff, feed] {
                                  try {
                                    result_ =
                                        serve_data_parallel(scenario_, run_.memory.kv_capacity_tokens,
                                                            requests, *run_.request_scheduler, *run_.routing,
                                                            steps_, progress, handoff, feed);
                                  } catch (const simgrid::ForcefulKillException&) {
                                    throw;  // SimGrid's own unwinding of a killed actor
                                  } catch (...) {
                                    failure_ = std::current_exception();
                                  }
                                });
  }

  // An error mid-run (bad input such as a calibration query far outside its grid, or any other) ends
  // the actor; SimGrid would abort on an exception crossing it, so it is carried out and thrown once
  // the engine stops, keeping its kind.
  void rethrow_failure() const {
    if (!failure_) return;
    try {
      std::rethrow_exception(failure_);
    } catch (const CalibrationGridError& e) {
      throw located_grid_error(scenario_, e);  // at the scenario key that asked
    }
  }

  RunResult result() {
    RunResult result = std::move(result_);
    result.layers = recorder_.layer_totals();
    for (std::size_t moe = 0; moe < result.layers.size(); ++moe)
      result.layers[moe].device_activations = builder_.layer_loads()[moe];
    result.timeline = recorder_.timeline();
    result.exported_steps = std::move(exporter_.steps());
    result.notes = run_.notes;
    result.engine_host_work = scenario_.engine.on();
    return result;
  }

 private:
  static std::unique_ptr<StepExecutor> make_executor(const Scenario& scenario, const Topology& topology,
                                                     FlowPlatform platform) {
    LoneCollectiveTime network(topology, BandwidthFactors(*scenario.calibration, topology));
    const ComputeUnits units{scenario.cluster.device.compute_units,
                             scenario.cluster.device.communication_units};
    return scenario.fidelity == NetworkFidelity::kFlow
               ? make_flow_executor(std::move(network), units, topology, platform)
               : make_bottleneck_executor(std::move(network), units);
  }

  const Scenario& scenario_;
  const RunPlan& run_;
  std::unique_ptr<StepExecutor> executor_;
  StepBuilder builder_;
  StepRecorder recorder_;
  StepExporter exporter_;
  StepHostWork host_work_;
  StepPipeline steps_;
  RunResult result_;
  std::exception_ptr failure_;
};

// A disaggregated scenario's KV transfers, its prefill pool from device `prefill_first` and its decode
// pool from `decode_first` of the platform.
KvTransferSetup kv_transfer_setup(const Scenario& scenario, int prefill_first, int decode_first) {
  const Disaggregation& pools = *scenario.disaggregation;
  KvTransferSetup setup{scenario.fidelity,
                        pools.kv_transfer,
                        prefill_first,
                        decode_first,
                        kv_bytes_per_token(scenario.model, scenario.precision),
                        scenario.model.layers};
  setup.decode_kv = pools.decode_kv;
  setup.prefill_group_devices = pools.prefill->tp;
  setup.decode_group_devices = pools.decode->tp;
  setup.parallel_pairs =
      std::min(kv_shards(scenario.model, pools.prefill->tp), kv_shards(scenario.model, pools.decode->tp));
  return setup;
}

// How a disaggregated pair's pools and KV transfers share links in flow: the KV transfers share the
// platform's links with each other and with each pool whose all-to-alls cross a link they or the
// other pool's cross; a pool that crosses none keeps its own sharing (with its lone-collective
// shortcut). The prefill loop holds a party either way: it starts the KV transfers. Outside flow,
// plain platforms at the pools' first devices.
struct PoolPlatforms {
  std::unique_ptr<SharedLinks> links;
  FlowPlatform prefill, decode;
  KvTransfers::Links kv;
};

PoolPlatforms pool_platforms(const Scenario& scenario, const Topology& topology, int prefill_first,
                             int decode_first) {
  const Disaggregation& pools = *scenario.disaggregation;
  PoolPlatforms out;
  out.prefill.first_device = prefill_first;
  out.decode.first_device = decode_first;
  if (scenario.fidelity != NetworkFidelity::kFlow) return out;
  out.links = std::make_unique<SharedLinks>(topology);
  const DeviceRange prefill_devices{prefill_first, pools.prefill->cluster.devices()},
      decode_devices{decode_first, pools.decode->cluster.devices()};
  const std::vector<char> prefill_a2a = crossed_channels(topology, prefill_devices, prefill_devices);
  const std::vector<char> decode_a2a = crossed_channels(topology, decode_devices, decode_devices);
  const std::vector<char> kv = crossed_channels(topology, prefill_devices, decode_devices);
  out.kv = {out.links.get(), out.links->join(), -1};
  out.prefill.party = out.kv.prefill_party;
  if (any_crossed_by_both(prefill_a2a, decode_a2a) || any_crossed_by_both(prefill_a2a, kv))
    out.prefill.shared = out.links.get();
  if (any_crossed_by_both(decode_a2a, prefill_a2a) || any_crossed_by_both(decode_a2a, kv)) {
    out.decode.shared = out.links.get();
    out.decode.party = out.kv.decode_party = out.links->join();
  }
  return out;
}

// Requests arrive at the prefill pool: in a closed loop or behind a router only it knows when each
// was sent.
void arrivals_from_prefill(DisaggregatedResult& result) {
  for (std::size_t i = 0; i < result.decode.requests.size(); ++i)
    result.decode.requests[i].arrival = result.prefill.requests[i].arrival;
}

}  // namespace

RunResult end_to_end(const DisaggregatedResult& run) {
  RunResult e2e = run.decode;
  e2e.prefill_tokens = run.prefill.prefill_tokens;
  e2e.prefix_cache = run.prefill.prefix_cache;  // the prefill pool's caches: the decode pool keeps none
  for (std::size_t i = 0; i < e2e.requests.size() && i < run.prefill.requests.size(); ++i)
    e2e.requests[i].cached_tokens = run.prefill.requests[i].cached_tokens;
  e2e.output_tokens += run.prefill.output_tokens;  // the first tokens
  e2e.end_time = std::max(run.prefill.end_time, run.decode.end_time);
  e2e.stopped_at_time_limit = run.prefill.stopped_at_time_limit || run.decode.stopped_at_time_limit;
  return e2e;
}

RunResult simulate(const Scenario& scenario, const RunPlan& run, StepWindow timeline,
                   const ServingProgress& progress, StepWindow exported) {
  SimulationEngine engine;
  const std::vector<simgrid::s4u::Host*> hosts = build_platform(run.topology);
  Server server(scenario, run, timeline, {}, exported);
  const std::vector<Request> requests = generate_requests(scenario.workload);
  server.start(hosts.front(), requests, progress, nullptr);
  engine.get().run();
  server.rethrow_failure();
  return server.result();
}

DisaggregatedResult simulate_disaggregated(const Scenario& scenario, const DisaggregatedPlan& plan,
                                           const ServingProgress& progress) {
  const Disaggregation& pools = *scenario.disaggregation;
  const Scenario& prefill = *pools.prefill;
  const Scenario& decode = *pools.decode;
  SimulationEngine engine;
  Cluster both = prefill.cluster;
  both.nodes = prefill.cluster.nodes + decode.cluster.nodes;
  const Topology topology = effective_topology(both, both.devices(), *scenario.calibration);
  const std::vector<simgrid::s4u::Host*> hosts = build_platform(topology);
  const int decode_first = prefill.cluster.devices();
  PoolPlatforms platforms = pool_platforms(scenario, topology, 0, decode_first);
  Server prefill_server(prefill, plan.prefill, {}, platforms.prefill);
  Server decode_server(decode, plan.decode, {}, platforms.decode);
  const std::vector<Request> requests = generate_requests(scenario.workload);
  KvTransfers transfers(topology, kv_transfer_setup(scenario, 0, decode_first), requests, platforms.kv);
  // The decode loop first: it must choose ranks before the first transfer starts.
  decode_server.start(hosts[decode_first], requests, progress, &transfers);
  const ServingProgress prefill_progress;  // none: the decode loop's is the run's (outlives the actors)
  prefill_server.start(hosts.front(), requests, prefill_progress, &transfers);
  engine.get().run();
  prefill_server.rethrow_failure();
  decode_server.rethrow_failure();
  DisaggregatedResult result{prefill_server.result(), decode_server.result(), transfers.records()};
  arrivals_from_prefill(result);
  return result;
}

DeploymentResult simulate_deployment(const Scenario& scenario, const DeploymentPlan& plan,
                                     const ServingProgress& progress) {
  const Deployment& deployment = *scenario.deployment;
  SimulationEngine engine;
  Cluster all = scenario.cluster;
  all.nodes = deployment.instances * deployment.instance_nodes();
  const Topology topology = effective_topology(all, all.devices(), *scenario.calibration);
  const std::vector<simgrid::s4u::Host*> hosts = build_platform(topology);
  const int instance_devices = deployment.instance_nodes() * scenario.cluster.gpus_per_node;
  const std::vector<Request> requests = generate_requests(scenario.workload);
  std::vector<std::vector<std::int16_t>> vote_devices;
  std::vector<const Placement*> placements;
  for (const RunPlan& run : plan.instances) {
    const Placement& placement = run.placement->placement;
    vote_devices.push_back(dp_vote_devices(run.placement->token_devices, placement.devices));
    placements.push_back(&placement);
  }
  InstanceRouter router(scenario, requests,
                        InstanceAffinity(router_of(deployment.router).affinity, std::move(vote_devices),
                                         std::move(placements), *plan.instances.front().routing));
  // Each loop's progress is its own requests'; the run's is their sum.
  std::vector<std::size_t> completed(deployment.instances, 0);
  std::vector<ServingProgress> instance_progress;
  for (int i = 0; i < deployment.instances; ++i)
    instance_progress.push_back([&, i](double seconds, std::size_t done, std::size_t) {
      completed[i] = done;
      std::size_t all_done = 0;
      for (const std::size_t n : completed) all_done += n;
      if (progress) progress(seconds, all_done, requests.size());
    });
  // Instances on disjoint nodes share no link (a route between two nodes crosses only their NICs),
  // so each flow executor of a colocated instance keeps its lone-collective shortcut (no
  // FlowPlatform::shared); a disaggregated instance's pools share links with its KV transfers.
  const ServingProgress no_progress;  // a prefill pool's: its decode pool's is the instance's
  std::vector<std::unique_ptr<Server>> servers, decode_servers;
  std::vector<std::unique_ptr<KvTransfers>> transfers;
  std::vector<PoolPlatforms> pool_links;  // per disaggregated instance: its shared links, for the run
  for (int i = 0; i < deployment.instances; ++i) {
    const Scenario& instance = *deployment.instance[i];
    const int first = i * instance_devices;
    if (!instance.disaggregation) {
      servers.push_back(
          std::make_unique<Server>(instance, plan.instances[i], StepWindow{}, FlowPlatform{first}));
      servers.back()->start(hosts[first], requests, instance_progress[i], nullptr, &router.feed(i));
      continue;
    }
    const Disaggregation& pools = *instance.disaggregation;
    const int decode_first = first + pools.prefill->cluster.devices();
    const PoolPlatforms& platforms =
        pool_links.emplace_back(pool_platforms(instance, topology, first, decode_first));
    servers.push_back(
        std::make_unique<Server>(*pools.prefill, plan.instances[i], StepWindow{}, platforms.prefill));
    decode_servers.push_back(
        std::make_unique<Server>(*pools.decode, plan.decode[i], StepWindow{}, platforms.decode));
    transfers.push_back(std::make_unique<KvTransfers>(
        topology, kv_transfer_setup(instance, first, decode_first), requests, platforms.kv));
    // The decode loop first: it must choose ranks before the first transfer starts.
    decode_servers.back()->start(hosts[decode_first], requests, instance_progress[i], transfers.back().get(),
                                 &router.feed(i));
    servers.back()->start(hosts[first], requests, no_progress, transfers.back().get(), &router.feed(i));
  }
  router.start(hosts.front());
  engine.get().run();
  DeploymentResult result;
  for (const auto& server : servers) server->rethrow_failure();
  for (const auto& server : decode_servers) server->rethrow_failure();
  for (int i = 0, pooled = 0; i < deployment.instances; ++i) {
    if (!deployment.instance[i]->disaggregation) {
      result.instances.push_back(servers[i]->result());
      continue;
    }
    DisaggregatedResult pools{servers[i]->result(), decode_servers[pooled]->result(),
                              transfers[pooled]->records()};
    ++pooled;
    arrivals_from_prefill(pools);
    result.instances.push_back(end_to_end(pools));
  }
  result.instance_of = router.instance_of();
  return result;
}

}  // namespace semsim
