#include "workloads/shared_prefixes.hpp"

#include <algorithm>
#include <unordered_map>

#include "workloads/counter_rng.hpp"

namespace semsim {
namespace {

// Streams of the seed apart from the workload's others (workload.cpp draws from 1 to 6).
constexpr std::uint64_t kShareStream = 21;
constexpr std::uint64_t kGroupStream = 22;
constexpr std::uint64_t kSharedBlockStream = 23;
constexpr std::uint64_t kOwnBlockStream = 24;

}  // namespace

SharedPrefixes SharedPrefixes::from_yaml(const YamlInput& in) {
  in.expect_map({"groups", "length", "share", "block_tokens"});
  SharedPrefixes p;
  p.groups = static_cast<int>(in.required("groups").as_int_in(1, 1 << 20));
  p.length = static_cast<int>(in.required("length").as_int_in(1, 1 << 22));
  p.share = in.required("share").as_double_in(0, 1);
  p.block_tokens = static_cast<int>(in.get_int_in("block_tokens", kDefaultPrefixBlockTokens, 1, 1 << 16));
  return p;
}

void assign_shared_prefixes(const SharedPrefixes& prefixes, std::uint64_t seed,
                            std::vector<Request>& requests) {
  // A session's first turn's prompt: how much of a shared prefix every turn of it starts with.
  std::unordered_map<int, int> first_prompt;
  for (const Request& request : requests)
    if (request.session >= 0 && request.turn == 0) first_prompt[request.session] = request.input_tokens;
  for (Request& request : requests) {
    const bool in_session = request.session >= 0;
    const auto key = static_cast<std::uint64_t>(in_session ? request.session : request.id);
    const bool shares = prefixes.on() && unit_interval(hash_keys(seed, kShareStream, key)) < prefixes.share;
    const std::uint64_t group =
        prefixes.on() ? hash_keys(seed, kGroupStream, key) % static_cast<std::uint64_t>(prefixes.groups) : 0;
    const int covered = in_session ? request.input_tokens + request.output_tokens - 1 : request.input_tokens;
    const int starts_with = in_session ? first_prompt.at(request.session) : request.input_tokens;
    const int blocks = covered / prefixes.block_tokens;
    const int shared = shares ? std::min(prefixes.length, starts_with) / prefixes.block_tokens : 0;
    request.prefix_blocks.resize(static_cast<std::size_t>(blocks));
    for (int b = 0; b < blocks; ++b)
      request.prefix_blocks[static_cast<std::size_t>(b)] =
          b < shared ? hash_keys(seed, kSharedBlockStream, group, static_cast<std::uint64_t>(b))
                     : hash_keys(seed, kOwnBlockStream, key, static_cast<std::uint64_t>(b));
  }
}

}  // namespace semsim
