#pragma once
// `workload.sessions`: multi-turn conversations. A session's turns are requests one after another:
// each turn's prompt is the conversation so far (every earlier turn's prompt and output) followed by
// its new message, so a prefix cache that keeps finished requests' outputs can serve all of it but
// the message. Sessions start as `workload.arrival` gives; a later turn arrives a think time after the
// turn before it arrived (an open loop: every arrival is known before the run).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/request.hpp"

namespace semsim {

struct Sessions {
  bool on = false;
  LengthDistribution turns;  // turns per session (the last session may be cut short)
  enum class Think { kFixed, kExponential };
  Think think = Think::kFixed;
  double think_seconds = 0;  // the fixed gap, or the exponential's mean

  // {turns: LENGTH_DIST, think_time: {dist: fixed, seconds: S} | {dist: exponential, mean: S}}.
  static Sessions from_yaml(const YamlInput& in, const std::string& base_dir);
  // The longest prompt a turn can have: the most turns' longest messages and every turn's but the
  // last longest output.
  long long longest_prompt(const LengthDistribution& message, const LengthDistribution& output) const;
  // The mean prompt over a session's turns, each turn's counted once.
  double mean_prompt(const LengthDistribution& message, const LengthDistribution& output) const;
};

// Streams the caller draws each turn's message and output length from, and its topic.
struct SessionDraws {
  std::mt19937_64& message;
  std::mt19937_64& output;
  std::mt19937_64& topic;
  int topics = 1;
};

// `count` requests, sessions starting at `session_starts` (ascending; enough of them: one per request
// at most), drawn in session order then ordered by arrival (a tie keeps session order), ids their
// index: each turn's session, turn and previous turn set, its input the conversation so far.
std::vector<Request> session_requests(const Sessions& sessions, int count,
                                      const std::vector<double>& session_starts,
                                      const LengthDistribution& message, const LengthDistribution& output,
                                      std::uint64_t seed, const SessionDraws& draws);

}  // namespace semsim
