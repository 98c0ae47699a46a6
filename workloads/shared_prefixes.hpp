#pragma once
// `workload.prefix`: synthetic prefix identities. A share of the requests start with one of a few
// shared prefixes (system prompts, few-shot examples); every other prompt block is the request's
// own. Which requests share, and which prefix, is a pure function of (seed, request id).
#include <cstdint>
#include <vector>

#include "models/yaml_input.hpp"
#include "workloads/request.hpp"

namespace semsim {

// The block size of synthetic prefix identities when workload.prefix leaves it out: fine enough to
// keep most of a shared prefix, coarse enough to keep a cache of long prompts small.
inline constexpr int kDefaultPrefixBlockTokens = 64;

struct SharedPrefixes {
  int groups = 0;    // distinct shared prefixes; 0: workload.prefix not given
  int length = 0;    // tokens each covers (a shorter prompt shares all of its own)
  double share = 0;  // probability that a request starts with one (the group uniform among them)
  int block_tokens = kDefaultPrefixBlockTokens;
  bool on() const { return groups > 0; }

  // {groups, length, share, block_tokens}.
  static SharedPrefixes from_yaml(const YamlInput& in);
};

// Each request's prefix_blocks, one id per full block of its prompt: a sharing request's first
// min(length, input_tokens) / block_tokens blocks are its group's, every other block its own
// (`prefixes` off: all its own, in blocks of its default block_tokens). A session's turns (Request::session)
// share and draw as one: their ids cover the prompt and output (input + output - 1 tokens, the KV a finished
// turn holds), a block's id the same in every turn that reaches it, its group's up to min(length, the first
// turn's prompt).
void assign_shared_prefixes(const SharedPrefixes& prefixes, std::uint64_t seed,
                            std::vector<Request>& requests);

}  // namespace semsim
