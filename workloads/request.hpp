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
  // Its prefix identity (workload.prefix, or a request log's hash_ids): one id per block of the
  // workload's prefix_block_tokens prompt tokens, from the first. Two requests share a block's KV when
  // their ids agree on it and on every block before it. Empty: no identity (nothing to share).
  std::vector<std::uint64_t> prefix_blocks;
};

}  // namespace semsim
