#pragma once
// A request as the serving system receives it.
#include <cstdint>
#include <vector>

namespace semsim {

struct Request {
  int id = 0;
  double arrival = 0;  // seconds since the start of the run
  int input_tokens = 0;
  int output_tokens = 0;
  int topic = 0;  // the routing source's latent topic (synthetic routing); 0 otherwise
  // workload.sessions: its conversation, its turn there (from 0) and the index of the turn before it
  // in the request list (-1: a first turn, or no sessions).
  int session = -1;
  int turn = 0;
  int previous_turn = -1;
  // Its prefix identity (workload.prefix, a request log's hash_ids, or workload.sessions): one id per
  // block of the workload's prefix_block_tokens prompt tokens, from the first. Two requests share a
  // block's KV when their ids agree on it and on every block before it. Empty: no identity (nothing to
  // share). In a session the ids go on over the request's output (what its KV holds when it finishes),
  // which the session's next turn starts with.
  std::vector<std::uint64_t> prefix_blocks;
};

}  // namespace semsim
