// The routers over a deployment's instances on hand-made streams: each decision from the loads and
// affinities given, as the simulator gives them at each arrival.
#include <gtest/gtest.h>

#include <vector>

#include "policies/expert_affinity_router.hpp"
#include "policies/least_load_router.hpp"
#include "policies/policy_registry.hpp"
#include "policies/round_robin_router.hpp"

namespace semsim {
namespace {

std::vector<InstanceLoad> loads(std::vector<int> in_flight, std::vector<double> affinity = {}) {
  std::vector<InstanceLoad> out;
  for (std::size_t i = 0; i < in_flight.size(); ++i)
    out.push_back({in_flight[i], affinity.empty() ? 0.0 : affinity[i]});
  return out;
}

PolicyChoice choice(const std::string& name) {
  return default_policy_choice(PolicyKind::kRouter, name);
}

TEST(RoundRobinRouter, EveryInstanceInTurnWhateverTheLoad) {
  const std::vector<InstanceLoad> busy = loads({9, 0, 5});
  std::vector<int> sent;
  for (long long routed = 0; routed < 7; ++routed)
    sent.push_back(round_robin_router({routed, busy}, choice("round_robin")));
  EXPECT_EQ(sent, (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(LeastLoadRouter, FewestInFlightLowestIndexOnTies) {
  EXPECT_EQ(least_load_router({0, loads({3, 1, 2})}, choice("least_load")), 1);
  EXPECT_EQ(least_load_router({0, loads({2, 1, 1})}, choice("least_load")), 1);
  EXPECT_EQ(least_load_router({0, loads({0, 0, 0})}, choice("least_load")), 0);
}

// A stream by hand: each request's affinities and the in-flight counts its predecessors leave
// (none finishes), routed one after another.
TEST(LeastLoadRouter, AHandMadeStreamSpreadsEvenly) {
  std::vector<InstanceLoad> state = loads({0, 0, 0});
  std::vector<int> sent;
  for (long long routed = 0; routed < 6; ++routed) {
    const int i = least_load_router({routed, state}, choice("least_load"));
    ++state[i].in_flight;
    sent.push_back(i);
  }
  EXPECT_EQ(sent, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(ExpertAffinityRouter, MostLocalInstanceWhileUnderTheCap) {
  const PolicyChoice affinity = choice("expert_affinity");  // load_slack 0.25
  // Idle: affinity alone (the one request of slack).
  EXPECT_EQ(expert_affinity_router({0, loads({0, 0, 0}, {0.2, 0.7, 0.4})}, affinity), 1);
  // Mean 2, cap 1.25 x 2 + 1 = 3.5: instance 1 with 4 in flight is over it, 2 is next most local.
  EXPECT_EQ(expert_affinity_router({0, loads({1, 4, 1}, {0.2, 0.7, 0.4})}, affinity), 2);
  // Equal affinity: fewer in flight, then lowest index.
  EXPECT_EQ(expert_affinity_router({0, loads({2, 1, 1}, {0.5, 0.5, 0.5})}, affinity), 1);
}

// Every request of the stream prefers instance 0 (none finishes): the cap, (1 + slack) x the mean in
// flight before it + 1, sends one to instance 1 once instance 0 reaches it.
std::vector<int> stream_preferring_instance_0(double load_slack, int requests) {
  PolicyChoice affinity = choice("expert_affinity");
  affinity.params["load_slack"] = load_slack;
  std::vector<InstanceLoad> state = loads({0, 0}, {0.9, 0.1});
  std::vector<int> sent;
  for (long long routed = 0; routed < requests; ++routed) {
    const int i = expert_affinity_router({routed, state}, affinity);
    ++state[i].in_flight;
    sent.push_back(i);
  }
  return sent;
}

TEST(ExpertAffinityRouter, AHandMadeStreamFollowsAffinityUntilTheCapBinds) {
  // Slack 0: in flight (1, 0) -> cap 1.5, still 0; (2, 0) -> cap 2, instance 1; (2, 1) -> cap 2.5, 0.
  EXPECT_EQ(stream_preferring_instance_0(0, 4), (std::vector<int>{0, 0, 1, 0}));
  // Slack 0.5: cap 0.75 x the total + 1; instance 0 takes 4 before (4, 0) reaches cap 4.
  EXPECT_EQ(stream_preferring_instance_0(0.5, 5), (std::vector<int>{0, 0, 0, 0, 1}));
}

TEST(ExpertAffinityRouter, TheLeastLoadedInstanceAlwaysQualifies) {
  const PolicyChoice affinity = choice("expert_affinity");
  for (const auto& in_flight :
       {std::vector<int>{0, 100, 100}, std::vector<int>{7, 7, 7}, std::vector<int>{50, 0}})
    EXPECT_GE(
        expert_affinity_router({0, loads(in_flight, std::vector<double>(in_flight.size(), 0.0))}, affinity),
        0);
}

TEST(Routers, RegisteredWithTheAffinityTheyRead) {
  EXPECT_EQ(router_of(choice("round_robin")).affinity, AffinityInput::kNone);
  EXPECT_EQ(router_of(choice("least_load")).affinity, AffinityInput::kNone);
  EXPECT_EQ(router_of(choice("expert_affinity")).affinity, AffinityInput::kPromptEstimate);
  EXPECT_EQ(router_of(choice("expert_affinity_hindsight")).affinity, AffinityInput::kHindsight);
  EXPECT_EQ(router_of(choice("expert_affinity_hindsight")).route, &expert_affinity_router);
}

}  // namespace
}  // namespace semsim
