#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "workloads/arrival_process.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/synthetic_routing.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

YamlInput yaml(const std::string& text) {
  return YamlInput::parse(text, "test.yaml");
}

double mean_gap(const std::vector<double>& t) {
  return (t.back() - t.front()) / static_cast<double>(t.size() - 1);
}

double cv_of_gaps(const std::vector<double>& t) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / gaps.size();
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  return std::sqrt(var / gaps.size()) / mean;
}

TEST(Arrivals, PoissonHasRequestedRateAndUnitCv) {
  std::mt19937_64 rng(7);
  const auto times =
      ArrivalProcess::from_yaml(yaml("{process: poisson, rate: 20}"), "").arrival_times(40000, rng);
  ASSERT_EQ(times.size(), 40000u);
  EXPECT_NEAR(mean_gap(times), 1.0 / 20, 0.02 / 20);
  EXPECT_NEAR(cv_of_gaps(times), 1.0, 0.03);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

TEST(Arrivals, GammaHasRequestedCv) {
  std::mt19937_64 rng(7);
  const auto times =
      ArrivalProcess::from_yaml(yaml("{process: gamma, rate: 5, cv: 3}"), "").arrival_times(40000, rng);
  EXPECT_NEAR(mean_gap(times), 0.2, 0.2 * 0.05);
  EXPECT_NEAR(cv_of_gaps(times), 3.0, 0.15);
}

TEST(Arrivals, FixedRateIsExactlySpaced) {
  std::mt19937_64 rng(7);
  const auto times = ArrivalProcess::from_yaml(yaml("{process: fixed, rate: 4}"), "").arrival_times(5, rng);
  EXPECT_EQ(times, (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
}

TEST(Arrivals, TraceFileIsReadAndChecked) {
  const auto dir = std::filesystem::temp_directory_path() / "semsim-arrivals-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "good.txt") << "# seconds\n0\n0.5\n\n2.0\n";
  std::ofstream(dir / "bad.txt") << "# seconds\n0\n1\n0.5\n";
  std::mt19937_64 rng(1);
  const auto good = ArrivalProcess::from_yaml(yaml("{process: trace, file: good.txt}"), dir.string());
  EXPECT_EQ(good.arrival_times(10, rng), (std::vector<double>{0.0, 0.5, 2.0}));
  EXPECT_EQ(good.arrival_times(2, rng).size(), 2u);
  try {
    ArrivalProcess::from_yaml(yaml("{process: trace, file: bad.txt}"), dir.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:4: arrival timestamps"), std::string::npos) << e.what();
  }
  try {
    ArrivalProcess::from_yaml(yaml("{process: trace, file: missing.txt}"), dir.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("test.yaml:1:24: file: file '"), std::string::npos) << e.what();
  }
}

TEST(Arrivals, RejectsBadRates) {
  EXPECT_THROW(ArrivalProcess::from_yaml(yaml("{process: poisson, rate: -1}"), ""), InputError);
  EXPECT_THROW(ArrivalProcess::from_yaml(yaml("{process: poisson, rate: 0}"), ""), InputError);
  EXPECT_THROW(ArrivalProcess::from_yaml(yaml("{process: gamma, rate: 1}"), ""), InputError);
  EXPECT_THROW(ArrivalProcess::from_yaml(yaml("{process: posson, rate: 1}"), ""), InputError);
}

TEST(Lengths, DistributionsStayInBounds) {
  std::mt19937_64 rng(3);
  const auto uniform = LengthDistribution::from_yaml(yaml("{dist: uniform, min: 10, max: 20}"), "");
  const auto lognormal =
      LengthDistribution::from_yaml(yaml("{dist: lognormal, median: 100, sigma: 1, max: 400}"), "");
  std::vector<int> logs;
  for (int i = 0; i < 5000; ++i) {
    const int u = uniform.draw(rng);
    EXPECT_GE(u, 10);
    EXPECT_LE(u, 20);
    logs.push_back(lognormal.draw(rng));
    EXPECT_LE(logs.back(), 400);
    EXPECT_GE(logs.back(), 1);
  }
  std::sort(logs.begin(), logs.end());
  EXPECT_NEAR(logs[logs.size() / 2], 100, 6);  // the median survives the clamp
  EXPECT_EQ(uniform.upper_bound(), 20);
  EXPECT_EQ(lognormal.upper_bound(), 400);
  EXPECT_THROW(LengthDistribution::from_yaml(yaml("{dist: uniform, min: 20, max: 10}"), ""), InputError);
  EXPECT_THROW(LengthDistribution::from_yaml(yaml("{dist: fixed, value: -3}"), ""), InputError);
}

SyntheticRouting make_routing(double affinity, double skew = 0.6, double boost = 3.0,
                              double token_skew = 1.0) {
  SyntheticRoutingParams p;
  p.token_skew = token_skew;
  p.token_affinity = {affinity};
  p.expert_skew = {skew};
  p.topic_boost = boost;
  return SyntheticRouting(p, 4, 64, 6, 99);
}

std::vector<TokenRef> tokens_of(const RoutingSource& routing, int requests, int length) {
  std::vector<TokenRef> tokens;
  for (int r = 0; r < requests; ++r)
    for (int pos = 0; pos < length; ++pos) {
      TokenRef t{r, r % 8, pos};
      t.id = routing.token_id(t);
      tokens.push_back(t);
    }
  return tokens;
}

TEST(SyntheticRouting, DistinctInRangeAndIndependentOfBatching) {
  const auto routing = make_routing(0.75);
  const auto tokens = tokens_of(routing, 20, 50);
  std::vector<ExpertId> batched(tokens.size() * 6);
  routing.route(2, tokens, batched);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::set<int> distinct(batched.begin() + i * 6, batched.begin() + i * 6 + 6);
    EXPECT_EQ(distinct.size(), 6u);
    EXPECT_GE(*distinct.begin(), 0);
    EXPECT_LT(*distinct.rbegin(), 64);
    std::vector<ExpertId> alone(6);
    routing.route(2, std::span(&tokens[i], 1), alone);
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batched.begin() + i * 6));
  }
}

// A layer's sets are drawn when it is first routed, from its own stream: routing the layers in any
// order, from one object or a fresh one per layer, gives the same experts — with byte tables (64
// experts), wide ones (300), and load-balanced sets.
TEST(SyntheticRouting, LayersDrawnOnFirstUseInAnyOrderRouteTheSame) {
  for (const int experts : {64, 300}) {
    SyntheticRoutingParams p;
    p.load_balance = experts == 64 ? 0.5 : 0.0;
    p.variant_overlap = {0.3};
    const SyntheticRouting in_order(p, 5, experts, 6, 11), backwards(p, 5, experts, 6, 11);
    const auto tokens = tokens_of(in_order, 30, 40);
    std::vector<std::vector<ExpertId>> first(5, std::vector<ExpertId>(tokens.size() * 6));
    for (int layer = 0; layer < 5; ++layer) in_order.route(layer, tokens, first[layer]);
    for (int layer = 4; layer >= 0; --layer) {
      std::vector<ExpertId> again(tokens.size() * 6), fresh(tokens.size() * 6);
      backwards.route(layer, tokens, again);
      SyntheticRouting(p, 5, experts, 6, 11).route(layer, tokens, fresh);
      EXPECT_EQ(again, first[layer]) << experts << " experts, layer " << layer;
      EXPECT_EQ(fresh, first[layer]) << experts << " experts, layer " << layer;
    }
    EXPECT_NE(first[0], first[1]);
  }
}

TEST(SyntheticRouting, FullAffinityMakesRoutingAFunctionOfTheToken) {
  const auto routing = make_routing(1.0);
  const auto tokens = tokens_of(routing, 50, 100);
  std::vector<ExpertId> experts(tokens.size() * 6);
  routing.route(1, tokens, experts);
  std::map<int, std::vector<ExpertId>> first_seen;
  int repeats = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::vector<ExpertId> set(experts.begin() + i * 6, experts.begin() + i * 6 + 6);
    auto [it, inserted] = first_seen.emplace(tokens[i].id, set);
    if (!inserted) {
      ++repeats;
      EXPECT_EQ(it->second, set);
    }
  }
  EXPECT_GT(repeats, 1000);  // Zipf token frequencies: many tokens recur
}

TEST(SyntheticRouting, NoSkewNoTopicsIsNearlyUniform) {
  // Frequent tokens repeat their expert sets, so uniform experts also need uniform token frequencies.
  const auto routing = make_routing(0.0, 0.0, 0.0, 0.0);
  const auto tokens = tokens_of(routing, 200, 100);
  std::vector<ExpertId> experts(tokens.size() * 6);
  routing.route(0, tokens, experts);
  std::vector<int> count(64, 0);
  for (ExpertId e : experts) ++count[e];
  const double expected = experts.size() / 64.0;
  for (int c : count) EXPECT_NEAR(c, expected, expected * 0.2);
}

TEST(Workload, SameSeedSameRequestsOtherSeedOther) {
  const auto in = yaml(
      "{requests: 100, seed: 5, arrival: {process: poisson, rate: 3}, input_len: {dist: uniform, min: 1, "
      "max: 900},"
      " output_len: {dist: fixed, value: 7}}");
  WorkloadSpec spec = WorkloadSpec::from_yaml(in, "");
  const auto a = generate_requests(spec), b = generate_requests(spec);
  spec.seed = 6;
  const auto c = generate_requests(spec);
  ASSERT_EQ(a.size(), 100u);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival, b[i].arrival);
    EXPECT_EQ(a[i].input_tokens, b[i].input_tokens);
    EXPECT_EQ(a[i].output_tokens, 7);
    differs = differs || a[i].input_tokens != c[i].input_tokens;
  }
  EXPECT_TRUE(differs);
}

// A closed loop's requests are an open loop's with every send time left to the serving loop (0).
TEST(Workload, ClosedLoopKeepsTheLengthsAndLeavesSendTimesToTheRun) {
  const std::string lengths =
      "input_len: {dist: uniform, min: 1, max: 900}, output_len: {dist: uniform, min: 1, max: 50}}";
  const WorkloadSpec open = WorkloadSpec::from_yaml(
      yaml("{requests: 50, seed: 5, arrival: {process: poisson, rate: 3}, " + lengths), "");
  const WorkloadSpec closed =
      WorkloadSpec::from_yaml(yaml("{requests: 50, seed: 5, concurrency: 8, " + lengths), "");
  EXPECT_EQ(open.concurrency, 0);
  EXPECT_EQ(closed.concurrency, 8);
  const auto a = generate_requests(open), b = generate_requests(closed);
  ASSERT_EQ(b.size(), 50u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(b[i].arrival, 0.0);
    EXPECT_EQ(a[i].input_tokens, b[i].input_tokens);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
  }
  EXPECT_THROW(WorkloadSpec::from_yaml(yaml("{requests: 50, concurrency: 0, " + lengths), ""), InputError);
}

}  // namespace
}  // namespace semsim
