// The flow fidelity's own link sharing (sim/link_sharing.hpp, sim/shared_links.hpp) against
// SimGrid's: the same steps, run once with every transfer a SimGrid parallel task and once with the
// sharing worked out without SimGrid, must give the same schedule to rounding.
#include "sim/link_sharing.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include <nlohmann/json.hpp>
#include <random>

#include "sim/platform.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/shared_links.hpp"
#include "sim/step_executor.hpp"
#include "tests/sim/topology_fixture.hpp"

namespace semsim {
namespace {

namespace sg4 = simgrid::s4u;
using Json = nlohmann::json;

constexpr double kBytesPerCopy = 7168;  // one FP8 token of DeepSeek-V3's hidden size

// A step's collectives' copy counts (they must outlive the graph) and the graph over them.
struct RandomStep {
  std::vector<std::vector<long long>> copies;
  StepGraph graph;
};

// `layers` of two-batch overlap as the builder lays them out (per micro-batch: attention, dispatch,
// experts, combine; compute in stream order A.attn, B.attn, A.exp, B.exp), or, `layers` 0, `burst`
// collectives released together. Random compute times, overheads and traffic (`sparsity`: one pair
// in that many moves copies; a collective moving nothing now and then).
void build_random_step(RandomStep& step, int devices, int layers, int burst, unsigned seed) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&](double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(rng);
  };
  const int collectives = layers > 0 ? 4 * layers : burst;
  step.copies.assign(static_cast<std::size_t>(collectives), {});
  for (auto& copies : step.copies) {
    copies.assign(static_cast<std::size_t>(devices) * devices, 0);
    const unsigned sparsity = 1 + rng() % 4;
    if (rng() % 10 == 0) continue;  // nothing to move
    for (auto& count : copies) count = rng() % sparsity == 0 ? static_cast<long long>(rng() % 400) : 0;
  }
  step.graph = StepGraph(devices);
  StepGraph& g = step.graph;
  int next_collective = 0;
  const auto collective = [&] {
    return Collective{CopyTraffic{step.copies[next_collective++], devices, kBytesPerCopy, false},
                      uniform(0, 20e-6), std::nullopt};
  };
  const auto compute = [&](Phase phase, int layer, int micro_batch, std::initializer_list<int> after) {
    Activity& a = g.add_compute(phase, layer, micro_batch, after);
    for (double& seconds : a.seconds) seconds = uniform(5e-6, 80e-6);
    return g.last();
  };
  if (layers == 0) {
    const int start = compute(Phase::kAttention, 0, 0, {});
    for (int c = 0; c < burst; ++c) g.add_collective(Phase::kDispatch, 0, 0, collective(), {start});
    return;
  }
  int a_combine = -1, b_combine = -1;
  for (int layer = 0; layer < layers; ++layer) {
    const int a_attention = a_combine < 0 ? compute(Phase::kAttention, layer, 0, {})
                                          : compute(Phase::kAttention, layer, 0, {a_combine});
    g.add_collective(Phase::kDispatch, layer, 0, collective(), {a_attention});
    const int a_dispatch = g.last();
    const int b_attention = b_combine < 0 ? compute(Phase::kAttention, layer, 1, {})
                                          : compute(Phase::kAttention, layer, 1, {b_combine});
    g.add_collective(Phase::kDispatch, layer, 1, collective(), {b_attention});
    const int b_dispatch = g.last();
    const int a_experts = compute(Phase::kExperts, layer, 0, {a_dispatch});
    g.add_collective(Phase::kCombine, layer, 0, collective(), {a_experts});
    a_combine = g.last();
    const int b_experts = compute(Phase::kExperts, layer, 1, {b_dispatch});
    g.add_collective(Phase::kCombine, layer, 1, collective(), {b_experts});
    b_combine = g.last();
  }
}

// Runs the step from a start past time 0 in a fresh engine (in a child process), its transfers as
// SimGrid tasks (`simgrid`) or by the executor's own sharing; returns every activity's timing.
Json execute(const Topology& topology, bool simgrid, int layers, int burst, unsigned seed) {
  return Json::parse(run_isolated([&] {
    SimulationEngine engine;
    const std::vector<sg4::Host*> hosts = build_platform(topology);
    Json out;
    sg4::Actor::create("driver", hosts[0], [&] {
      const auto executor = make_flow_executor(LoneCollectiveTime(topology), {132, 20}, topology,
                                               FlowPlatform{.first_device = 0, .simgrid_tasks = simgrid});
      RandomStep step;
      build_random_step(step, topology.devices, layers, burst, seed);
      StepClock clock;
      clock.advance(1.25e-3);
      StepSchedule schedule;
      executor->run(step.graph, clock, schedule);
      out["shared_links"] = schedule.shared_links;
      out["end"] = schedule.end;
      for (const ActivityTiming& t : schedule.activities)
        out["activities"].push_back({t.release, t.end, t.transfer_start, t.transfer_seconds, t.released_by});
    });
    engine.run();
    return out.dump();
  }));
}

void expect_near(double a, double b, const std::string& what) {
  EXPECT_NEAR(a, b, 1e-12 * std::max(std::abs(a), 1e-3)) << what;
}

// Whether the step's transfers overlapped (then both ran their sharing, and are compared).
bool expect_same_schedule(const Topology& topology, int layers, int burst, unsigned seed) {
  const Json simgrid = execute(topology, true, layers, burst, seed);
  const Json modelled = execute(topology, false, layers, burst, seed);
  if (!modelled["shared_links"].get<bool>()) return false;
  expect_near(simgrid["end"], modelled["end"], "step end");
  EXPECT_EQ(simgrid["activities"].size(), modelled["activities"].size());
  for (std::size_t a = 0; a < std::min(simgrid["activities"].size(), modelled["activities"].size()); ++a) {
    const Json& s = simgrid["activities"][a];
    const Json& m = modelled["activities"][a];
    for (int field = 0; field < 4; ++field)
      expect_near(s[field], m[field], "activity " + std::to_string(a) + " field " + std::to_string(field));
    EXPECT_EQ(s[4], m[4]) << "activity " << a << " released by";
  }
  return true;
}

// Random two-batch steps of `layers` layers from seeds 1..`seeds`, links shared in at least one.
void expect_same_two_batch_schedules(const Topology& topology, int layers, unsigned seeds) {
  int shared = 0;
  for (unsigned seed = 1; seed <= seeds; ++seed) shared += expect_same_schedule(topology, layers, 0, seed);
  EXPECT_GT(shared, 0);
}

TEST(LinkSharing, TwoBatchOverlapMatchesSimGridOnTwoNodesOfTwo) {
  expect_same_two_batch_schedules(test::build_topology(2, FabricKind::kFatTree, 2), 6, 6);
}

TEST(LinkSharing, TwoBatchOverlapMatchesSimGridOnTwoNodesOfEight) {
  expect_same_two_batch_schedules(test::build_topology(2, FabricKind::kFatTree), 6, 4);
}

TEST(LinkSharing, TwoBatchOverlapMatchesSimGridOnRailsOfFourNodes) {
  expect_same_two_batch_schedules(test::build_topology(4, FabricKind::kRail, 4), 4, 3);
}

// Many transfers at once: several rounds of the fair-bottleneck solver, transfers saturated in one
// round still taking from the channels left open.
TEST(LinkSharing, BurstsOfTransfersMatchSimGrid) {
  for (const Topology& topology :
       {test::build_topology(2, FabricKind::kFatTree, 2), test::build_topology(2, FabricKind::kFatTree)})
    for (unsigned seed = 1; seed <= 4; ++seed) EXPECT_TRUE(expect_same_schedule(topology, 0, 3 + seed, seed));
}

// A disaggregated run's shape on one platform: pool A (the first `a_nodes` nodes) and pool B (the
// rest) each run random two-batch steps back to back, and point-to-point transfers from A's devices
// to B's (as KV caches move) start at random times, each from its own actor. Run with every transfer
// a SimGrid task, or in the platform's SharedLinks (pool steps as its parties, each transfer one).
// `time_precision` > 0 replaces SimGrid's surf/precision.
Json execute_shared(int nodes, int a_nodes, int gpus, FabricKind fabric, bool simgrid, unsigned seed,
                    double time_precision) {
  return Json::parse(run_isolated([&] {
    SimulationEngine engine;
    if (time_precision > 0) sg4::Engine::set_config(fmt::format("surf/precision:{}", time_precision));
    const Topology platform = test::build_topology(nodes, fabric, gpus);
    const std::vector<sg4::Host*> hosts = build_platform(platform);
    std::unique_ptr<SharedLinks> links = simgrid ? nullptr : std::make_unique<SharedLinks>(platform);
    const std::vector<Topology> pools{test::build_topology(a_nodes, fabric, gpus),
                                      test::build_topology(nodes - a_nodes, fabric, gpus)};
    const int b_first = pools[0].devices;
    std::mt19937_64 rng(seed);
    const auto uniform = [&](double low, double high) {
      return std::uniform_real_distribution<double>(low, high)(rng);
    };
    Json out;
    for (int p = 0; p < 2; ++p) {
      const double start = 1e-3 + uniform(0, 100e-6);
      const unsigned step_seed = seed * 10 + static_cast<unsigned>(p) * 5;
      sg4::Actor::create("pool" + std::to_string(p), hosts[p * b_first], [&, p, start, step_seed] {
        const Topology& topology = pools[p];
        const int party = links ? links->join() : -1;
        const auto executor = make_flow_executor(LoneCollectiveTime(topology), {132, 20}, topology,
                                                 FlowPlatform{p * b_first, links.get(), party, simgrid});
        StepClock clock;
        clock.advance(start);
        for (unsigned s = 0; s < 3; ++s) {
          // Between steps the loop sleeps, saying until when (as the serving loops do).
          if (links) links->idle_until(party, clock.now());
          clock.sync();
          RandomStep step;
          build_random_step(step, topology.devices, 2, 0, step_seed + s);
          StepSchedule schedule;
          executor->run(step.graph, clock, schedule);
          Json& steps = out["pool" + std::to_string(p)];
          Json activities = Json::array();
          for (const ActivityTiming& t : schedule.activities)
            activities.push_back({t.release, t.end, t.transfer_start, t.transfer_seconds, t.released_by});
          steps.push_back({{"end", schedule.end}, {"activities", activities}});
          clock.advance(20e-6 * s);  // the next step after a gap (none after the first)
        }
      });
    }
    // Between the first two devices of each pool, so that they often share a NIC with each other; some
    // after the pools' steps, alone with each other. Each moves twice, the second transfer a random
    // gap after the first ends.
    for (int k = 0; k < 16; ++k) {
      const int src = static_cast<int>(rng() % 2);
      const int dst = b_first + static_cast<int>(rng() % 2);
      const double bytes = uniform(1e5, 4e6), start = 1e-3 + uniform(0, 2.5e-3);
      const double gap = uniform(0, 30e-6);
      sg4::Actor::create("p2p" + std::to_string(k), hosts[src], [&, k, src, dst, bytes, start, gap] {
        const int party = links ? links->join() : -1;  // at time 0: it sleeps until its start as a party
        double at = start;
        for (int transfer = 0; transfer < 2; ++transfer) {
          if (simgrid) {
            sg4::this_actor::sleep_until(at);
            sg4::Exec::init()
                ->set_hosts({hosts[src], hosts[dst]})
                ->set_flops_amounts({0.0, 0.0})
                ->set_bytes_amounts({0.0, bytes, 0.0, 0.0})
                ->start()
                ->wait();
          } else {
            links->start_pair(party, transfer, src, dst, bytes, at);
            const double end = links->wait_end(party, INFINITY).time;
            if (sg4::Engine::get_clock() < end) sg4::this_actor::sleep_until(end);
          }
          double narrowest = INFINITY;
          for (const RouteHop& hop : platform.route(src, dst))
            narrowest = std::min(narrowest, platform.links[hop.link].bandwidth);
          const double lone = platform.route_latency(src, dst) + bytes / narrowest;
          const double end = sg4::Engine::get_clock();
          out["p2p"][2 * k + transfer] = {end, end - at - lone};
          at = end + gap;
        }
        if (links) links->leave(party);
      });
    }
    engine.run();
    return out.dump();
  }));
}

// Both pools' steps and the transfers between them share the platform's links in SharedLinks as
// SimGrid shares them among its tasks, some transfers slowed by the others' traffic. To rounding
// with a fine surf/precision; at SimGrid's default (1 ns) within it: SimGrid pays what is left of a
// latency at once when less than that remains at any event, any actor's, and SharedLinks sees only
// the events of parties with transfers in flight.
TEST(SharedLinks, PoolsAndTransfersBetweenThemMatchSimGrid) {
  struct Case {
    int nodes, a_nodes, gpus;
    FabricKind fabric;
  };
  for (const double precision : {1e-13, 0.0}) {
    const double tolerance = precision > 0 ? 0.0 : 1e-9;  // 0: to rounding
    const auto expect_close = [&](double a, double b, const std::string& what) {
      if (tolerance == 0)
        expect_near(a, b, what);
      else
        EXPECT_NEAR(a, b, tolerance) << what;
    };
    for (const Case& c : {Case{3, 1, 4, FabricKind::kFatTree}, Case{3, 1, 8, FabricKind::kFatTree},
                          Case{4, 2, 4, FabricKind::kRail}}) {
      int slowed = 0;
      for (unsigned seed = 1; seed <= 3; ++seed) {
        const Json simgrid = execute_shared(c.nodes, c.a_nodes, c.gpus, c.fabric, true, seed, precision);
        const Json shared = execute_shared(c.nodes, c.a_nodes, c.gpus, c.fabric, false, seed, precision);
        const std::string where =
            fmt::format("{} nodes of {}, seed {}, precision {}: ", c.nodes, c.gpus, seed, precision);
        for (const char* pool : {"pool0", "pool1"}) {
          ASSERT_EQ(simgrid[pool].size(), shared[pool].size());
          for (std::size_t s = 0; s < simgrid[pool].size(); ++s) {
            const std::string at = where + pool + " step " + std::to_string(s) + ": ";
            const Json &a = simgrid[pool][s]["activities"], &b = shared[pool][s]["activities"];
            expect_close(simgrid[pool][s]["end"], shared[pool][s]["end"], at + "end");
            ASSERT_EQ(a.size(), b.size()) << at;
            for (std::size_t i = 0; i < a.size(); ++i) {
              for (int field = 0; field < 4; ++field)
                expect_close(a[i][field], b[i][field], at + fmt::format("activity {} field {}", i, field));
              EXPECT_EQ(a[i][4], b[i][4]) << at << "activity " << i << " released by";
            }
          }
        }
        for (std::size_t k = 0; k < simgrid["p2p"].size(); ++k) {
          expect_close(simgrid["p2p"][k][0], shared["p2p"][k][0], where + "transfer " + std::to_string(k));
          slowed += shared["p2p"][k][1].get<double>() > 1e-9;
        }
      }
      EXPECT_GT(slowed, 0) << c.nodes << " nodes of " << c.gpus;
    }
  }
}

// Two actors moving bytes over the same route, each waiting for a moment (as for a compute event)
// and then for its end: B from 1 ms, starting a second transfer at its first one's end; A from 5 us
// later, while B's first is moving. A, working the sharing out itself while B waits, must stop at
// B's end, since B acts there and slows A again.
// Returns when each transfer ended: A's, then B's two.
std::vector<double> run_two_actors(bool simgrid) {
  const std::string out = run_isolated([&] {
    SimulationEngine engine;
    sg4::Engine::set_config("surf/precision:1e-13");
    const Topology platform = test::build_topology(2, FabricKind::kFatTree, 2);
    const std::vector<sg4::Host*> hosts = build_platform(platform);
    std::unique_ptr<SharedLinks> links = simgrid ? nullptr : std::make_unique<SharedLinks>(platform);
    std::vector<double> ends(3, 0.0);
    const auto move = [&](int party, int id, double bytes, double at) {
      if (simgrid) {
        sg4::this_actor::sleep_until(at);
        sg4::Exec::init()
            ->set_hosts({hosts[0], hosts[2]})
            ->set_flops_amounts({0.0, 0.0})
            ->set_bytes_amounts({0.0, bytes, 0.0, 0.0})
            ->start()
            ->wait();
        return sg4::Engine::get_clock();
      }
      links->start_pair(party, id, 0, 2, bytes, at);
      LinkSharing::End end = links->wait_end(party, at + 1e-6);  // a moment, then to its end
      if (end.id < 0) end = links->wait_end(party, INFINITY);
      return end.time;
    };
    sg4::Actor::create("a", hosts[0], [&] { ends[0] = move(links ? links->join() : -1, 0, 8e6, 1.005e-3); });
    sg4::Actor::create("b", hosts[0], [&] {
      const int party = links ? links->join() : -1;
      ends[1] = move(party, 0, 1e6, 1e-3);
      if (links && sg4::Engine::get_clock() < ends[1]) sg4::this_actor::sleep_until(ends[1]);
      ends[2] = move(party, 1, 4e6, ends[1]);
    });
    engine.run();
    return Json(ends).dump();
  });
  return Json::parse(out).get<std::vector<double>>();
}

TEST(SharedLinks, ARunningAheadPartyStopsAtAnEndAnotherActsOn) {
  const std::vector<double> simgrid = run_two_actors(true), shared = run_two_actors(false);
  ASSERT_EQ(simgrid.size(), shared.size());
  for (std::size_t i = 0; i < simgrid.size(); ++i)
    expect_near(simgrid[i], shared[i], "end " + std::to_string(i));
  EXPECT_LT(shared[1], shared[0]);  // B's first transfer ended while A's was moving
  EXPECT_LT(shared[1], shared[2]);
}

}  // namespace
}  // namespace semsim
