// Multi-turn sessions (workload.sessions): each turn's prompt is the conversation so far, its arrival
// a think time after the turn before, its prefix ids the same as the turn before's over their shared
// tokens (output included); and the scenario errors.
#include "workloads/sessions.hpp"

#include <gtest/gtest.h>

#include "models/input_error.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

WorkloadSpec workload(const std::string& text) {
  return WorkloadSpec::from_yaml(YamlInput::parse(text, "w.yaml"), "");
}

std::string error_of(const std::string& text) {
  try {
    workload(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Two sessions of three turns starting 1 s apart, 10 s of thought between turns: messages of 100
// tokens, outputs of 50; every turn's prompt holds the earlier ones' prompts and outputs.
TEST(Sessions, TurnsCarryTheConversationAndArriveAfterTheirThinkTime) {
  const WorkloadSpec spec = workload(
      "{requests: 6, arrival: {process: fixed, rate: 1}, input_len: {dist: fixed, value: 100}, "
      "output_len: {dist: fixed, value: 50}, sessions: {turns: {dist: fixed, value: 3}, "
      "think_time: {dist: fixed, seconds: 10}}}");
  const std::vector<Request> requests = generate_requests(spec);
  ASSERT_EQ(requests.size(), 6u);
  const double arrivals[] = {0, 1, 10, 11, 20, 21};
  const int sessions[] = {0, 1, 0, 1, 0, 1}, turns[] = {0, 0, 1, 1, 2, 2},
            inputs[] = {100, 100, 250, 250, 400, 400};
  const int previous[] = {-1, -1, 0, 1, 2, 3};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(requests[i].id, i);
    EXPECT_DOUBLE_EQ(requests[i].arrival, arrivals[i]);
    EXPECT_EQ(requests[i].session, sessions[i]);
    EXPECT_EQ(requests[i].turn, turns[i]);
    EXPECT_EQ(requests[i].input_tokens, inputs[i]);
    EXPECT_EQ(requests[i].previous_turn, previous[i]);
    EXPECT_EQ(requests[i].topic, requests[i % 2].topic);  // one conversation, one topic
    // Ids over its prompt and output but the last token, in blocks of 64: turn 0's 149 tokens fill
    // 2 blocks, turn 1's 299 fill 4, turn 2's 449 fill 7.
    EXPECT_EQ(requests[i].prefix_blocks.size(), std::vector<std::size_t>({2, 2, 4, 4, 7, 7})[i]);
  }
  EXPECT_EQ(spec.prefix_block_tokens(), 64);
  EXPECT_EQ(spec.longest_prompt(), 400);
  // A later turn starts with every id of the turn before it; the two sessions share none.
  for (int i = 2; i < 6; ++i) {
    const Request& before = requests[requests[i].previous_turn];
    EXPECT_TRUE(std::equal(before.prefix_blocks.begin(), before.prefix_blocks.end(),
                           requests[i].prefix_blocks.begin()));
  }
  EXPECT_NE(requests[0].prefix_blocks[0], requests[1].prefix_blocks[0]);
}

// workload.prefix with sessions: a sharing session's turns start with their group's blocks, up to
// the first turn's prompt; the last session is cut short at workload.requests; exponential think
// times keep each turn after the one before.
TEST(Sessions, SharedPrefixesAndCutSessions) {
  const WorkloadSpec spec = workload(
      "{requests: 7, arrival: {process: fixed, rate: 1}, input_len: {dist: fixed, value: 200}, "
      "output_len: {dist: fixed, value: 64}, prefix: {groups: 1, length: 1000, share: 1}, "
      "sessions: {turns: {dist: fixed, value: 3}, think_time: {dist: exponential, mean: 5}}}");
  const std::vector<Request> requests = generate_requests(spec);
  ASSERT_EQ(requests.size(), 7u);
  int cut_session_turns = 0;
  for (const Request& r : requests) {
    // 200 tokens of the first turn: its 3 full blocks are the group's in every turn.
    EXPECT_EQ(
        std::vector<std::uint64_t>(r.prefix_blocks.begin(), r.prefix_blocks.begin() + 3),
        std::vector<std::uint64_t>(requests[0].prefix_blocks.begin(), requests[0].prefix_blocks.begin() + 3));
    if (r.previous_turn >= 0) {
      EXPECT_GT(r.arrival, requests[r.previous_turn].arrival);
    }
    cut_session_turns += r.session == 2;
  }
  EXPECT_EQ(cut_session_turns, 1);
  // Past the group's blocks each session's own.
  const auto other = std::find_if(requests.begin(), requests.end(),
                                  [&](const Request& r) { return r.session != requests[0].session; });
  ASSERT_NE(other, requests.end());
  EXPECT_NE(requests[0].prefix_blocks[3], other->prefix_blocks[3]);
  EXPECT_EQ(generate_requests(spec)[6].arrival, requests[6].arrival);  // seeded
}

TEST(Sessions, BadKeysNameTheirPlace) {
  const std::string lengths =
      "arrival: {process: poisson, rate: 1}, input_len: {dist: fixed, value: 100}, "
      "output_len: {dist: fixed, value: 50}, ";
  EXPECT_NE(
      error_of("{requests: 4, " + lengths + "sessions: {turns: {dist: fixed, value: 2}}}").find("think_time"),
      std::string::npos);
  EXPECT_NE(error_of("{requests: 4, " + lengths +
                     "sessions: {turns: {dist: fixed, value: 2}, think_time: {dist: fixed, mean: 3}}}")
                .find("w.yaml:1:"),
            std::string::npos);
  EXPECT_NE(error_of("{requests: 4, " + lengths +
                     "sessions: {turns: {dist: fixed, value: 2}, think_time: {dist: fixed, seconds: -1}}}")
                .find("seconds"),
            std::string::npos);
  EXPECT_NE(error_of("{requests: 4, " + lengths +
                     "sessions: {turns: {dist: fixed, value: 2}, think_time: {dist: fixed, seconds: 1}, "
                     "rounds: 2}}")
                .find("rounds"),
            std::string::npos);
  // A conversation longer than a prompt may be.
  EXPECT_NE(
      error_of("{requests: 4, " + lengths +
               "sessions: {turns: {dist: fixed, value: 1000000}, think_time: {dist: fixed, seconds: 1}}}")
          .find("turns"),
      std::string::npos);
  EXPECT_NE(
      error_of("{requests: 4, concurrency: 2, input_len: {dist: fixed, value: 100}, output_len: {dist: "
               "fixed, value: 50}, sessions: {turns: {dist: fixed, value: 2}, think_time: {dist: fixed, "
               "seconds: 1}}}")
          .find("remove workload.concurrency"),
      std::string::npos);
}

}  // namespace
}  // namespace semsim
