// The flow fidelity's own link sharing (sim/link_sharing.hpp) against SimGrid's: the same steps,
// run once with every transfer a SimGrid parallel task (the platform marked shared) and once with
// the sharing worked out without SimGrid, must give the same schedule to rounding.
#include "sim/link_sharing.hpp"

#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <nlohmann/json.hpp>
#include <random>

#include "sim/platform.hpp"
#include "sim/runs/isolated_process.hpp"
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
    int argc = 1;
    char program[] = "link_sharing_test";
    char* argv[] = {program, nullptr};
    sg4::Engine engine(&argc, argv);
    configure_engine();
    const std::vector<sg4::Host*> hosts = build_platform(topology);
    Json out;
    sg4::Actor::create("driver", hosts[0], [&] {
      const auto executor =
          make_flow_executor(LoneCollectiveTime(topology), {132, 20}, topology, FlowPlatform{0, simgrid});
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

// Whether the step's transfers overlapped (then both ran their sharing, and are compared).
bool expect_same_schedule(const Topology& topology, int layers, int burst, unsigned seed) {
  const Json simgrid = execute(topology, true, layers, burst, seed);
  const Json modelled = execute(topology, false, layers, burst, seed);
  const auto expect_near = [](double a, double b, const std::string& what) {
    EXPECT_NEAR(a, b, 1e-12 * std::max(std::abs(a), 1e-3)) << what;
  };
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

}  // namespace
}  // namespace semsim
