#include "workloads/sessions.hpp"

#include <algorithm>
#include <numeric>

#include "models/input_limits.hpp"
#include "workloads/counter_rng.hpp"

namespace semsim {
namespace {

// Streams of the seed apart from the workload's others (workload.cpp, shared_prefixes.cpp).
constexpr std::uint64_t kTurnsStream = 25;
constexpr std::uint64_t kThinkStream = 26;

}  // namespace

Sessions Sessions::from_yaml(const YamlInput& in, const std::string& base_dir) {
  in.expect_map({"turns", "think_time"});
  Sessions s;
  s.on = true;
  s.turns = LengthDistribution::from_yaml(in.required("turns"), base_dir);
  const YamlInput think = in.required("think_time");
  if (think.required("dist").as_choice({"fixed", "exponential"}) == "fixed") {
    think.expect_map({"dist", "seconds"});
    s.think_seconds = think.required("seconds").as_double_in(0, limits::kSimulatedSeconds);
  } else {
    think.expect_map({"dist", "mean"});
    s.think = Think::kExponential;
    s.think_seconds = think.required("mean").as_double_in(1e-9, limits::kSimulatedSeconds);
  }
  return s;
}

long long Sessions::longest_prompt(const LengthDistribution& message,
                                   const LengthDistribution& output) const {
  const long long turns_at_most = turns.upper_bound();
  return turns_at_most * message.upper_bound() + (turns_at_most - 1) * output.upper_bound();
}

double Sessions::mean_prompt(const LengthDistribution& message, const LengthDistribution& output) const {
  // Turn k (from 0) carries k earlier exchanges: over a session of T turns, (T - 1) / 2 on average.
  return message.mean() + (turns.mean() - 1) / 2 * (message.mean() + output.mean());
}

std::vector<Request> session_requests(const Sessions& sessions, int count,
                                      const std::vector<double>& session_starts,
                                      const LengthDistribution& message, const LengthDistribution& output,
                                      std::uint64_t seed, const SessionDraws& draws) {
  std::mt19937_64 turns_rng(hash_keys(seed, kTurnsStream));
  std::mt19937_64 think_rng(hash_keys(seed, kThinkStream));
  std::exponential_distribution<double> think(sessions.think_seconds > 0 ? 1 / sessions.think_seconds : 1);
  std::uniform_int_distribution<int> topic(0, draws.topics - 1);
  std::vector<Request> drawn;
  drawn.reserve(static_cast<std::size_t>(count));
  for (int s = 0; static_cast<int>(drawn.size()) < count; ++s) {
    const int turns = sessions.turns.draw(turns_rng);
    const int session_topic = topic(draws.topic);
    double arrival = session_starts.at(static_cast<std::size_t>(s));
    int conversation = 0;  // tokens of the earlier turns' prompts and outputs
    for (int turn = 0; turn < turns && static_cast<int>(drawn.size()) < count; ++turn) {
      if (turn > 0)
        arrival += sessions.think == Sessions::Think::kFixed ? sessions.think_seconds : think(think_rng);
      Request& r = drawn.emplace_back();
      r.arrival = arrival;
      r.session = s;
      r.turn = turn;
      r.previous_turn = turn > 0 ? static_cast<int>(drawn.size()) - 2 : -1;
      r.topic = session_topic;
      r.input_tokens = conversation + message.draw(draws.message);
      r.output_tokens = output.draw(draws.output);
      conversation = r.input_tokens + r.output_tokens;
    }
  }
  std::vector<int> order(drawn.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return drawn[a].arrival < drawn[b].arrival; });
  std::vector<int> position(drawn.size());
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  std::vector<Request> requests;
  requests.reserve(drawn.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    Request& r = requests.emplace_back(std::move(drawn[order[i]]));
    r.id = static_cast<int>(i);
    if (r.previous_turn >= 0) r.previous_turn = position[r.previous_turn];
  }
  return requests;
}

}  // namespace semsim
