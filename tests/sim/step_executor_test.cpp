// The executors on hand-computed graphs: what shares a link, what hides what, how SMs held by
// collectives slow compute, and the two-batch overlap schedule worked out by hand.
#include "sim/step_executor.hpp"

#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <functional>
#include <nlohmann/json.hpp>

#include "sim/platform.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/step_recorder.hpp"
#include "tests/sim/topology_fixture.hpp"

namespace semsim {
namespace {

namespace sg4 = simgrid::s4u;
using Json = nlohmann::json;
using test::build_topology;

constexpr double kCopyBytes = 45e6;  // 0.1 ms on one 450 GB/s NVLink direction

// One copy of kCopyBytes from `src` to `dst` (plus storage that outlives the step).
struct PointToPoint {
  std::vector<long long> copies;
  PointToPoint(int devices, int src, int dst) : copies(static_cast<std::size_t>(devices) * devices, 0) {
    copies[static_cast<std::size_t>(src) * devices + dst] = 1;
  }
  Collective collective(double overhead = 0) const {
    return {CopyTraffic{copies, 8, kCopyBytes, false}, overhead, std::nullopt};
  }
};

// Builds a graph with `build`, runs it once from time 0 with the fidelity's executor in a fresh
// SimGrid engine (in a child process), and returns each activity's release and end, the step's
// end, whether its transfers shared links, and what the recorder made of it.
Json execute(NetworkFidelity fidelity, ComputeUnits units, const std::function<void(StepGraph&)>& build) {
  return Json::parse(run_isolated([&] {
    SimulationEngine engine;
    const Topology topology = build_topology(1, FabricKind::kNone);
    const std::vector<sg4::Host*> hosts = build_platform(topology);
    Json out;
    sg4::Actor::create("driver", hosts[0], [&] {
      const auto executor = fidelity == NetworkFidelity::kFlow
                                ? make_flow_executor(LoneCollectiveTime(topology), units, topology)
                                : make_bottleneck_executor(LoneCollectiveTime(topology), units);
      StepGraph graph(topology.devices);
      build(graph);
      StepClock clock;
      StepSchedule schedule;
      executor->run(graph, clock, schedule);
      StepRecord record;
      StepRecorder recorder(MoeModel{}, topology.devices, {});
      recorder.record(graph, schedule, record);
      for (const ActivityTiming& t : schedule.activities) out["ends"].push_back(t.end);
      out["end"] = schedule.end;
      out["clock"] = clock.now();
      out["shared_links"] = schedule.shared_links;
      out["total"] = record.phases.total();
      for (const Phase p : kPhases) out["phases"].push_back(record.phases[p]);
      out["exposed"] = record.comm_exposed;
      out["hidden"] = record.comm_hidden;
    });
    engine.run();
    return out.dump();
  }));
}

double lone_seconds() {
  const PointToPoint p(8, 0, 1);
  return LoneCollectiveTime(build_topology(1, FabricKind::kNone)).seconds(p.collective().traffic);
}

void fill(Activity& a, double seconds) {
  std::fill(a.seconds.begin(), a.seconds.end(), seconds);
}

TEST(StepExecutor, TwoEqualTransfersSharingOneLinkTakeTwiceOne) {
  const double one = lone_seconds();
  const PointToPoint to_one(8, 0, 1), to_two(8, 0, 2);  // both leave device 0 on its one up-link
  for (const NetworkFidelity fidelity : {NetworkFidelity::kBottleneck, NetworkFidelity::kFlow}) {
    const Json r = execute(fidelity, {}, [&](StepGraph& g) {
      g.add_collective(Phase::kDispatch, -1, 0, to_one.collective(), {});
      g.add_collective(Phase::kDispatch, -1, 1, to_two.collective(), {});
    });
    // Bottleneck queues them: each pays its route latency. Flow shares the link: both end when the
    // bytes of both have crossed it, after one route latency.
    const double route_latency = 2 * test::kNvlLatency;
    const double twice = fidelity == NetworkFidelity::kFlow ? 2 * one - route_latency : 2 * one;
    EXPECT_NEAR(r["end"].get<double>(), twice, 1e-9 * twice) << static_cast<int>(fidelity);
    EXPECT_EQ(r["shared_links"].get<bool>(), fidelity == NetworkFidelity::kFlow);
    EXPECT_NEAR(r["clock"].get<double>(), r["end"].get<double>(), 1e-15);
  }
}

// Bottleneck queues transfers whatever links they use; flow lets transfers on disjoint links run
// side by side.
TEST(StepExecutor, DisjointTransfersRunSideBySideOnlyInFlow) {
  const double one = lone_seconds();
  const PointToPoint first(8, 0, 1), second(8, 2, 3);
  auto build = [&](StepGraph& g) {
    g.add_collective(Phase::kDispatch, -1, 0, first.collective(), {});
    g.add_collective(Phase::kDispatch, -1, 1, second.collective(), {});
  };
  EXPECT_NEAR(execute(NetworkFidelity::kFlow, {}, build)["end"].get<double>(), one, 1e-9 * one);
  EXPECT_DOUBLE_EQ(execute(NetworkFidelity::kBottleneck, {}, build)["end"].get<double>(), 2 * one);
}

TEST(StepExecutor, ComputeFullyHidingCommunicationGivesTheMaxNotTheSum) {
  const double one = lone_seconds();
  const PointToPoint p(8, 0, 1);
  for (const NetworkFidelity fidelity : {NetworkFidelity::kBottleneck, NetworkFidelity::kFlow}) {
    const Json r = execute(fidelity, {}, [&](StepGraph& g) {
      fill(g.add_compute(Phase::kExperts, -1, 0, {}), 10 * one);
      g.add_collective(Phase::kCombine, -1, 1, p.collective(), {});
    });
    EXPECT_DOUBLE_EQ(r["end"].get<double>(), 10 * one);
    EXPECT_DOUBLE_EQ(r["total"].get<double>(), 10 * one);  // the critical path is the compute alone
    EXPECT_EQ(r["exposed"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(r["hidden"].get<double>(), one);
    EXPECT_FALSE(r["shared_links"].get<bool>());  // one transfer: its closed form
  }
}

// 20 of 100 SMs held while the transfer runs: the compute does 0.8 of its work per second then.
TEST(StepExecutor, SmsHeldByACollectiveSlowTheComputeBesideIt) {
  const double one = lone_seconds();
  const PointToPoint p(8, 0, 1);
  const Json r = execute(NetworkFidelity::kBottleneck, {100, 20}, [&](StepGraph& g) {
    fill(g.add_compute(Phase::kExperts, -1, 0, {}), 10 * one);
    g.add_collective(Phase::kCombine, -1, 1, p.collective(), {});
  });
  const double expected = one + (10 * one - 0.8 * one);
  EXPECT_NEAR(r["end"].get<double>(), expected, 1e-12 * expected);
  EXPECT_NEAR(r["total"].get<double>(), expected, 1e-12 * expected);
}

// A collective a measured kernel times lasts its measured seconds, holds its SMs as any collective
// does (20 of 100: the compute beside it runs at 0.8), and loads no link: a transfer on the same
// link does not wait for it, even in bottleneck's one-at-a-time network.
TEST(StepExecutor, ATimedCollectiveLastsItsMeasuredTimeAndLoadsNoLink) {
  const double one = lone_seconds();
  const PointToPoint measured(8, 0, 1), moved(8, 0, 2);  // both would leave device 0 on its up-link
  for (const NetworkFidelity fidelity : {NetworkFidelity::kBottleneck, NetworkFidelity::kFlow}) {
    const Json r = execute(fidelity, {100, 20}, [&](StepGraph& g) {
      fill(g.add_compute(Phase::kExperts, -1, 0, {}), 10 * one);
      g.add_collective(Phase::kDispatch, -1, 1, timed(measured.collective(), 5 * one), {});
      g.add_collective(Phase::kCombine, -1, 1, moved.collective(), {});
      EXPECT_EQ(g.activities()[1].kind, ActivityKind::kTimedCollective);
      EXPECT_EQ(g.activities()[2].kind, ActivityKind::kCollective);
    });
    EXPECT_DOUBLE_EQ(r["ends"][1].get<double>(), 5 * one) << static_cast<int>(fidelity);
    EXPECT_NEAR(r["ends"][2].get<double>(), one, 1e-9 * one) << static_cast<int>(fidelity);
    // Both collectives hold SMs over [0, T], the timed one alone over [T, 5T]: the compute does
    // 0.6 T of work in the first T, 3.2 T in the next 4 T, the rest (6.2 T) at full speed.
    const double compute_end = one + 4 * one + (10 * one - 0.6 * one - 3.2 * one);
    EXPECT_NEAR(r["ends"][0].get<double>(), compute_end, 1e-12 * compute_end) << static_cast<int>(fidelity);
  }
}

// A chain: compute, collective (with overhead), compute; each starts when the last one ends on
// every device, and the phases along the path are exactly the activities' own times.
TEST(StepExecutor, AChainRunsBackToBack) {
  const double one = lone_seconds();
  const PointToPoint p(8, 0, 1);
  for (const NetworkFidelity fidelity : {NetworkFidelity::kBottleneck, NetworkFidelity::kFlow}) {
    const Json r = execute(fidelity, {100, 20}, [&](StepGraph& g) {
      Activity& attention = g.add_compute(Phase::kAttention, -1, 0, {});
      for (int d = 0; d < 8; ++d) attention.seconds[d] = d * one;  // device 7 is the slowest
      g.add_collective(Phase::kDispatch, -1, 0, p.collective(3 * one), {0});
      fill(g.add_compute(Phase::kExperts, -1, 0, {1}), 2 * one);
    });
    const double ends[] = {7 * one, 7 * one + 3 * one + one, 7 * one + 3 * one + one + 2 * one};
    for (int a = 0; a < 3; ++a) EXPECT_DOUBLE_EQ(r["ends"][a].get<double>(), ends[a]) << a;
    EXPECT_EQ(r["phases"][static_cast<int>(Phase::kAttention)].get<double>(), 7 * one);
    EXPECT_EQ(r["phases"][static_cast<int>(Phase::kDispatch)].get<double>(), 3 * one + one);
    EXPECT_EQ(r["phases"][static_cast<int>(Phase::kExperts)].get<double>(), 2 * one);
    EXPECT_EQ(r["exposed"].get<double>(), 4 * one);
    EXPECT_EQ(r["hidden"].get<double>(), 0.0);
  }
}

// Two micro-batches A and B as the builder lays them out, times in units of one transfer T:
// attention 2T each, dispatch and combine 2T of overhead then one transfer (3T), experts 4T each;
// compute in stream order A.attn, B.attn, A.exp, B.exp. By hand (no SM slowdown):
//   A.attn [0,2]  B.attn [2,4] (stream)  A.disp [2,5]  B.disp [4,7]
//   A.exp  [5,9]  B.exp [9,13] (stream)  A.comb [9,12] B.comb [13,16]
// where serially it would take 2 x (2 + 3 + 4 + 3) = 24T. Critical path: A.attn, A.disp, A.exp,
// B.exp (bound by its stream), B.comb.
TEST(StepExecutor, TwoBatchOverlapFollowsTheHandSchedule) {
  const double t = lone_seconds();
  const PointToPoint p(8, 0, 1);
  const Json r = execute(NetworkFidelity::kBottleneck, {}, [&](StepGraph& g) {
    fill(g.add_compute(Phase::kAttention, 0, 0, {}), 2 * t);             // 0 A.attn
    g.add_collective(Phase::kDispatch, 0, 0, p.collective(2 * t), {0});  // 1 A.disp
    fill(g.add_compute(Phase::kAttention, 0, 1, {}), 2 * t);             // 2 B.attn
    g.add_collective(Phase::kDispatch, 0, 1, p.collective(2 * t), {2});  // 3 B.disp
    fill(g.add_compute(Phase::kExperts, 0, 0, {1}), 4 * t);              // 4 A.exp
    g.add_collective(Phase::kCombine, 0, 0, p.collective(2 * t), {4});   // 5 A.comb
    fill(g.add_compute(Phase::kExperts, 0, 1, {3}), 4 * t);              // 6 B.exp
    g.add_collective(Phase::kCombine, 0, 1, p.collective(2 * t), {6});   // 7 B.comb
  });
  const double ends[] = {2, 5, 4, 7, 9, 12, 13, 16};
  for (int a = 0; a < 8; ++a) EXPECT_NEAR(r["ends"][a].get<double>(), ends[a] * t, 1e-12 * t) << a;
  EXPECT_NEAR(r["total"].get<double>(), 16 * t, 1e-12 * t);
  // On the path: A.disp 3T and B.comb 3T of communication; A.exp [5,9] has communication beside
  // it over [5,7] (B.disp) and B.exp [9,13] over [9,12] (A.comb): 5T hidden.
  EXPECT_NEAR(r["exposed"].get<double>(), 6 * t, 1e-12 * t);
  EXPECT_NEAR(r["hidden"].get<double>(), 5 * t, 1e-12 * t);
  EXPECT_NEAR(r["phases"][static_cast<int>(Phase::kExperts)].get<double>(), 8 * t, 1e-12 * t);
}

}  // namespace
}  // namespace semsim
