#include "workloads/shared_prefixes.hpp"

#include <algorithm>

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
  for (Request& request : requests) {
    const auto id = static_cast<std::uint64_t>(request.id);
    const bool shares = unit_interval(hash_keys(seed, kShareStream, id)) < prefixes.share;
    const std::uint64_t group =
        hash_keys(seed, kGroupStream, id) % static_cast<std::uint64_t>(prefixes.groups);
    const int blocks = request.input_tokens / prefixes.block_tokens;
    const int shared = shares ? std::min(prefixes.length, request.input_tokens) / prefixes.block_tokens : 0;
    request.prefix_blocks.resize(static_cast<std::size_t>(blocks));
    for (int b = 0; b < blocks; ++b)
      request.prefix_blocks[static_cast<std::size_t>(b)] =
          b < shared ? hash_keys(seed, kSharedBlockStream, group, static_cast<std::uint64_t>(b))
                     : hash_keys(seed, kOwnBlockStream, id, static_cast<std::uint64_t>(b));
  }
}

}  // namespace semsim
