#include "sim/network.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/platform.hpp"
#include "sim/runs/isolated_process.hpp"
#include "tests/sim/topology_fixture.hpp"

namespace semsim {
namespace {

namespace sg4 = simgrid::s4u;

using test::build_topology;
using test::kNicBandwidth;
using test::kNicLatency;
using test::kNvlBandwidth;
using test::kNvlLatency;
constexpr double kBytes = 16.0 * (1 << 20);

TrafficMatrix all_to_all(int devices, double bytes) {
  TrafficMatrix traffic(devices);
  for (int src = 0; src < devices; ++src)
    for (int dst = 0; dst < devices; ++dst)
      if (src != dst) traffic.at(src, dst) = bytes;
  return traffic;
}

// Everyone sends `background` to everyone, and `hot` more to device 3.
TrafficMatrix hot_receiver(int devices, double hot, double background) {
  TrafficMatrix traffic = all_to_all(devices, background);
  for (int src = 0; src < devices; ++src)
    if (src != 3) traffic.at(src, 3) += hot;
  return traffic;
}

double bottleneck_run(const Topology& topology, const TrafficMatrix& traffic) {
  return LoneCollectiveTime(topology).seconds(traffic);
}

struct FlowResult {
  std::vector<double> durations;
  double end_clock = 0;  // clock.now() after the last collective
};

// Runs the collectives back to back, each as one SimGrid parallel task (what the `flow` executor
// runs when transfers overlap), in a fresh SimGrid engine (in a child process), starting after
// `idle_before` seconds of pending StepClock time.
FlowResult run_flow(const Topology& topology, const std::vector<TrafficMatrix>& collectives,
                    double idle_before = 0, BandwidthFactors factors = {}) {
  const std::string output = run_isolated([&] {
    SimulationEngine engine;
    const std::vector<sg4::Host*> hosts = build_platform(topology);
    std::string result;
    sg4::Actor::create("driver", hosts[0], [&] {
      StepClock clock;
      clock.advance(idle_before);
      for (const TrafficMatrix& traffic : collectives) {
        std::vector<double> bytes = factors.apply(traffic).bytes;
        for (int d = 0; d < traffic.devices; ++d) bytes[d * traffic.devices + d] = 0;
        clock.sync();
        const double start = sg4::Engine::get_clock();
        if (std::any_of(bytes.begin(), bytes.end(), [](double b) { return b > 0; }))
          sg4::Exec::init()
              ->set_hosts(hosts)
              ->set_flops_amounts(std::vector<double>(hosts.size(), 0.0))
              ->set_bytes_amounts(bytes)
              ->wait();
        result += fmt::format("{} ", sg4::Engine::get_clock() - start);
      }
      result += fmt::format("{}", clock.now());
    });
    engine.run();
    return result;
  });
  std::istringstream in(output);
  std::vector<double> numbers;
  for (double value; in >> value;) numbers.push_back(value);
  FlowResult flow;
  flow.end_clock = numbers.back();
  numbers.pop_back();
  flow.durations = numbers;
  return flow;
}

// The closed forms are met exactly (SimGrid's max-min solution of a lone task to its rounding).
void expect_same_time(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * expected) << "actual " << actual << " expected " << expected;
}

TEST(LevelBytes, SplitsByNodeAndIgnoresTheDiagonal) {
  const Topology topology = build_topology(2, FabricKind::kFatTree);
  TrafficMatrix traffic(16);
  traffic.at(0, 1) = 3;
  traffic.at(9, 15) = 4;
  traffic.at(0, 9) = 5;
  traffic.at(14, 2) = 6;
  traffic.at(2, 2) = 100;
  const LevelBytes bytes = level_bytes(traffic, topology);
  EXPECT_EQ(bytes.scale_up, 7);
  EXPECT_EQ(bytes.scale_out, 11);
}

TEST(StepClock, AccumulatesAndSleepsOffPendingTime) {
  const std::string output = run_isolated([] {
    SimulationEngine engine;
    const std::vector<sg4::Host*> hosts = build_platform(build_topology(1, FabricKind::kNone));
    std::string result;
    sg4::Actor::create("driver", hosts[0], [&] {
      StepClock clock;
      clock.advance(1.5);
      clock.advance(0.25);
      result += fmt::format("{} {} ", clock.now(), sg4::Engine::get_clock());
      clock.sync();
      result += fmt::format("{} {}", clock.now(), sg4::Engine::get_clock());
    });
    engine.run();
    return result;
  });
  EXPECT_EQ(output, "1.75 0 1.75 1.75");
}

TEST(BottleneckSeconds, ZeroWithoutOffDiagonalTraffic) {
  const Topology topology = build_topology(1, FabricKind::kNone);
  TrafficMatrix traffic(8);
  EXPECT_EQ(bottleneck_seconds(traffic, topology), 0.0);
  traffic.at(4, 4) = 1e9;
  EXPECT_EQ(bottleneck_seconds(traffic, topology), 0.0);
  EXPECT_EQ(bottleneck_run(topology, traffic), 0.0);
}

TEST(BottleneckSeconds, LoneCollectiveTimeIsTheBottleneckFormula) {
  const Topology topology = build_topology(2, FabricKind::kRail);
  const TrafficMatrix traffic = hot_receiver(16, kBytes, kBytes / 64);
  LoneCollectiveTime network(topology);
  EXPECT_EQ(network.seconds(traffic), bottleneck_seconds(traffic, topology));
  EXPECT_THROW(network.seconds(TrafficMatrix(8)), std::invalid_argument);
}

// Dispatch and combine run as whole copies: their time and level bytes must be the matrix's they
// fill in, bit for bit, whether the integer paths apply (integer payloads on small groups) or not (a
// fractional payload, a negative count, a 64-device group, bandwidth factors fall back to the matrix).
TEST(BottleneckCopies, RunCopiesEqualsRunOnTheFilledMatrix) {
  std::mt19937_64 rng(11);
  for (const int nodes : {1, 2, 8}) {
    const Topology topology = build_topology(nodes, nodes > 1 ? FabricKind::kRail : FabricKind::kNone);
    const int devices = topology.devices;
    for (const double bytes_per_copy : {2112.0, 4096.0, 2112.5, 1e12})
      for (const bool transposed : {false, true})
        for (const int sparsity : {1, 3}) {
          SCOPED_TRACE(fmt::format("{} nodes, {} B, transposed {}, 1/{} nonzero", nodes, bytes_per_copy,
                                   transposed, sparsity));
          std::vector<long long> copies(static_cast<std::size_t>(devices) * devices);
          for (long long& count : copies)
            count = rng() % sparsity == 0 ? static_cast<long long>(rng() % 5000) : 0;
          if (sparsity == 3) copies[1] = -7;
          const CopyTraffic traffic{copies, devices, bytes_per_copy, transposed};
          TrafficMatrix filled;
          traffic.fill(filled);
          LoneCollectiveTime network(topology);
          EXPECT_EQ(network.seconds(traffic), network.seconds(filled));
          const LevelBytes from_copies = level_bytes(traffic, topology),
                           from_matrix = level_bytes(filled, topology);
          EXPECT_EQ(from_copies.scale_up, from_matrix.scale_up);
          EXPECT_EQ(from_copies.scale_out, from_matrix.scale_out);
        }
  }
}

// A transposed copy matrix is the combine: pair (src, dst) moves what (dst, src) dispatched.
TEST(BottleneckCopies, TransposedCopiesReverseEveryPair) {
  std::vector<long long> copies(64, 0);
  copies[2 * 8 + 5] = 3;
  const CopyTraffic combine{copies, 8, 10.0, true};
  EXPECT_EQ(combine.at(5, 2), 30.0);
  EXPECT_EQ(combine.at(2, 5), 0.0);
  const Topology topology = build_topology(1, FabricKind::kNone);
  EXPECT_DOUBLE_EQ(LoneCollectiveTime(topology).seconds(combine), 30.0 / kNvlBandwidth + 2 * kNvlLatency);
}

// 1x8 NVSwitch: each GPU pushes 7 B through its own link, every hop pair costs 2 link latencies.
TEST(Network, AllToAllOnNvSwitchRunsAtLinkBandwidth) {
  const Topology topology = build_topology(1, FabricKind::kNone);
  const TrafficMatrix traffic = all_to_all(8, kBytes);
  const double expected = 7 * kBytes / kNvlBandwidth + 2 * kNvlLatency;
  expect_same_time(bottleneck_seconds(traffic, topology), expected);
  expect_same_time(bottleneck_run(topology, traffic), expected);
  expect_same_time(run_flow(topology, {traffic}).durations.at(0), expected);
}

// 2x8 fat tree: each GPU sends to 8 peers on the other node through its NIC (8 B at 50 GB/s),
// far slower than its 7 intra-node peers over NVLink; the NIC route has the longest latency.
TEST(Network, AllToAllOnTwoNodesIsBoundByTheNics) {
  const Topology topology = build_topology(2, FabricKind::kFatTree);
  const TrafficMatrix traffic = all_to_all(16, kBytes);
  const double expected = 8 * kBytes / kNicBandwidth + 2 * kNicLatency;
  expect_same_time(bottleneck_seconds(traffic, topology), expected);
  expect_same_time(bottleneck_run(topology, traffic), expected);
  expect_same_time(run_flow(topology, {traffic}).durations.at(0), expected);
}

// A hot receiver is bound by its own down link: on one node its NVLink (7 senders), on a fat tree
// its NIC (8 senders on the other node), on a 4-node rail its NIC (24 senders, all forwarded onto
// its rail). Flow and bottleneck agree on all three.
TEST(Network, HotReceiverIsBoundByItsDownLink) {
  const double hot = kBytes, background = kBytes / 64;
  struct Case {
    int nodes;
    FabricKind fabric;
    double expected;
  };
  const Case cases[] = {
      {1, FabricKind::kNone, 7 * (hot + background) / kNvlBandwidth + 2 * kNvlLatency},
      {2, FabricKind::kFatTree, 8 * (hot + background) / kNicBandwidth + 2 * kNicLatency},
      {4, FabricKind::kRail, 24 * (hot + background) / kNicBandwidth + 2 * kNvlLatency + 2 * kNicLatency},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.nodes);
    const Topology topology = build_topology(c.nodes, c.fabric);
    const TrafficMatrix traffic = hot_receiver(topology.devices, hot, background);
    const double bottleneck = bottleneck_seconds(traffic, topology);
    EXPECT_NEAR(bottleneck, c.expected, 1e-9 * c.expected);
    EXPECT_NEAR(bottleneck_run(topology, traffic), bottleneck, 1e-12 * bottleneck);
    expect_same_time(run_flow(topology, {traffic}).durations.at(0), bottleneck);
  }
}

TEST(FlowNetwork, TasksStartAfterPendingTimeAndAdvanceTheClock) {
  const Topology topology = build_topology(1, FabricKind::kNone);
  const TrafficMatrix traffic = all_to_all(8, kBytes);
  TrafficMatrix only_diagonal(8);
  only_diagonal.at(2, 2) = kBytes;
  const FlowResult flow = run_flow(topology, {traffic, only_diagonal, traffic}, 1e-3);
  ASSERT_EQ(flow.durations.size(), 3u);
  EXPECT_EQ(flow.durations[1], 0.0);
  EXPECT_DOUBLE_EQ(flow.durations[0], flow.durations[2]);
  EXPECT_DOUBLE_EQ(flow.end_clock, 1e-3 + flow.durations[0] + flow.durations[2]);
}

// A profile whose all-to-all moves `scale_up` (`scale_out`) of the bandwidth at every message size,
// with decoy fits at other rank counts.
CalibrationProfile profile_with_factors(double scale_up, double scale_out) {
  CalibrationProfile profile;
  auto fit = [](const char* level, int ranks, double factor) {
    CollectiveFit f;
    f.collective = "all_to_all";
    f.level = level;
    f.ranks = ranks;
    f.factor_bytes = {1, 1e12};
    f.factor = {factor, factor};
    return f;
  };
  profile.collectives = {fit("scaleup", 2, 0.9), fit("scaleup", 8, scale_up), fit("scaleout", 16, scale_out),
                         fit("scaleup", 32, 0.9)};
  profile.collectives[0].collective = "all_reduce";
  profile.collectives[0].ranks = 8;
  return profile;
}

TEST(BandwidthFactors, DivideEachPairsBytesByTheFactorOfItsLevel) {
  const Topology topology = build_topology(2, FabricKind::kFatTree);
  BandwidthFactors factors(profile_with_factors(0.5, 0.25), topology);
  ASSERT_FALSE(factors.empty());
  TrafficMatrix traffic = hot_receiver(16, kBytes, kBytes / 64);
  TrafficMatrix expected = traffic;
  for (int src = 0; src < 16; ++src)
    for (int dst = 0; dst < 16; ++dst) expected.at(src, dst) *= topology.same_node(src, dst) ? 2.0 : 4.0;
  EXPECT_EQ(factors.apply(traffic).bytes, expected.bytes);
  EXPECT_TRUE(BandwidthFactors(CalibrationProfile{}, topology).empty());
  EXPECT_EQ(&BandwidthFactors().apply(traffic), &traffic);
}

TEST(AllToAllOverhead, AcrossNodesTheClosestScaleOutAlphaWithinANodeOverheadCollective) {
  CalibrationProfile profile = profile_with_factors(0.5, 0.25);
  profile.collectives[2].alpha = 40e-6;  // the scale-out all-to-all of 16
  EXPECT_EQ(all_to_all_overhead(profile, build_topology(2, FabricKind::kFatTree), 10e-6), 40e-6);
  EXPECT_EQ(all_to_all_overhead(profile, build_topology(1, FabricKind::kNone), 10e-6), 10e-6);
  profile.collectives.erase(profile.collectives.begin() + 2);  // measured within a node only
  EXPECT_EQ(all_to_all_overhead(profile, build_topology(2, FabricKind::kFatTree), 10e-6), 10e-6);
}

// Both fidelities apply the curve, so they still agree: on one node the NVLinks run at half speed,
// on two the NICs at a quarter.
TEST(BandwidthFactors, FlowAndBottleneckAgreeUnderACurve) {
  for (const int nodes : {1, 2}) {
    SCOPED_TRACE(nodes);
    const Topology topology = build_topology(nodes, nodes == 1 ? FabricKind::kNone : FabricKind::kFatTree);
    const BandwidthFactors factors(profile_with_factors(0.5, 0.25), topology);
    const TrafficMatrix traffic = all_to_all(topology.devices, kBytes);
    const double expected = nodes == 1 ? 7 * kBytes / (0.5 * kNvlBandwidth) + 2 * kNvlLatency
                                       : 8 * kBytes / (0.25 * kNicBandwidth) + 2 * kNicLatency;
    expect_same_time(LoneCollectiveTime(topology, factors).seconds(traffic), expected);
    expect_same_time(run_flow(topology, {traffic}, 0, factors).durations.at(0), expected);
  }
}

}  // namespace
}  // namespace semsim
