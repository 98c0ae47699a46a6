#pragma once
// A rank's prefix cache (serving.prefix_cache): a radix tree of prompt KV blocks, keyed by the
// requests' prefix identities (workloads/request.hpp), as SGLang's RadixCache keeps the KV of
// finished prompts for later requests that start the same way. A running request holds the blocks
// it reuses or inserted; blocks no request holds stay cached but are evicted least recently used
// first, leaves before their parents, when the rank's KV cache needs their room.
#include <cstdint>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "workloads/request.hpp"

namespace semsim {

class PrefixCache {
 public:
  explicit PrefixCache(int block_tokens) : block_tokens_(block_tokens) {}

  int block_tokens() const { return block_tokens_; }
  // Of `blocks` (a prompt's full blocks, from the first), how many are cached.
  int match(std::span<const std::uint64_t> blocks) const;
  // Tokens of the first `count` blocks (all cached) that no request holds: the room holding them
  // takes from what eviction could free.
  long long unheld_tokens(std::span<const std::uint64_t> blocks, int count) const;

  // A request's hold on its cached prefix: the tree nodes from the first block.
  using Path = std::vector<int>;
  // Holds the first `count` blocks of `blocks` (all cached), used now: `path` becomes theirs.
  void hold(std::span<const std::uint64_t> blocks, int count, Path& path);
  // Caches blocks [path.size(), blocks.size()) after the held `path`, held too (a block another
  // request inserted meanwhile is shared, not added twice). Returns the tokens it added.
  long long insert(std::span<const std::uint64_t> blocks, Path& path);
  // The request no longer holds `path`'s blocks (they stay cached).
  void release(const Path& path);
  // Evicts unheld blocks, least recently used first (a leaf before its parent), until `tokens` are
  // freed or none is left. Returns the tokens freed.
  long long evict(long long tokens);

  long long tokens() const { return static_cast<long long>(blocks_) * block_tokens_; }
  long long held_tokens() const { return static_cast<long long>(held_blocks_) * block_tokens_; }
  long long evicted_blocks() const { return evicted_blocks_; }

 private:
  struct Node {
    std::uint64_t id = 0;
    int parent = -1;  // -1: the root (the empty prefix)
    int depth = 0;
    int children = 0;
    int holders = 0;
    std::uint64_t last_use = 0;
  };
  struct ChildKey {
    int parent;
    std::uint64_t id;
    bool operator==(const ChildKey&) const = default;
  };
  struct ChildKeyHash {
    std::size_t operator()(const ChildKey& key) const;
  };
  // Unheld nodes by (last use, deeper first): along a path a parent is used whenever a child is, so
  // the first is always a leaf.
  using EvictionKey = std::tuple<std::uint64_t, int, int>;
  EvictionKey eviction_key(int node) const { return {nodes_[node].last_use, -nodes_[node].depth, node}; }
  int child(int parent, std::uint64_t id) const;
  void take_hold(int node);

  int block_tokens_;
  std::vector<Node> nodes_;
  std::vector<int> free_nodes_;
  std::unordered_map<ChildKey, int, ChildKeyHash> children_;
  std::set<EvictionKey> evictable_;
  std::uint64_t clock_ = 0;  // uses so far: the LRU order
  int blocks_ = 0;
  int held_blocks_ = 0;
  long long evicted_blocks_ = 0;
};

// The prompt blocks of `request` a prefix cache of `block_tokens` can share: its prefix ids of
// blocks its prompt fills (a last, partial block is its own).
std::span<const std::uint64_t> full_prefix_blocks(const Request& request, int block_tokens);

// The blocks of `request`'s prompt and `generated` output tokens that its KV fills when it finishes
// (every token but the last output, which no step feeds in) and that have an id: past its prompt only
// in a session.
std::span<const std::uint64_t> finished_sequence_blocks(const Request& request, int generated,
                                                        int block_tokens);

// The prompt tokens of `request` whose KV `cache` holds: its longest cached prefix, short of the
// prompt's last token (which must run to yield the first output token). What a cache-aware
// scheduler or router asks of each rank or instance.
long long cached_prefix_tokens(const PrefixCache& cache, const Request& request);

}  // namespace semsim
