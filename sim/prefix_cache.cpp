#include "sim/prefix_cache.hpp"

#include <algorithm>
#include <stdexcept>

#include "workloads/counter_rng.hpp"

namespace semsim {

std::size_t PrefixCache::ChildKeyHash::operator()(const ChildKey& key) const {
  return static_cast<std::size_t>(mix_keys(0, static_cast<std::uint64_t>(key.parent), key.id));
}

int PrefixCache::child(int parent, std::uint64_t id) const {
  const auto it = children_.find({parent, id});
  return it == children_.end() ? -1 : it->second;
}

int PrefixCache::match(std::span<const std::uint64_t> blocks) const {
  int node = -1;
  int matched = 0;
  for (const std::uint64_t id : blocks) {
    node = child(node, id);
    if (node < 0) break;
    ++matched;
  }
  return matched;
}

long long PrefixCache::unheld_tokens(std::span<const std::uint64_t> blocks, int count) const {
  long long unheld = 0;
  int node = -1;
  for (int b = 0; b < count; ++b) {
    node = child(node, blocks[static_cast<std::size_t>(b)]);
    if (nodes_[node].holders == 0) unheld += block_tokens_;
  }
  return unheld;
}

void PrefixCache::take_hold(int node) {
  Node& n = nodes_[node];
  if (n.holders++ == 0) {
    evictable_.erase(eviction_key(node));
    ++held_blocks_;
  }
}

void PrefixCache::hold(std::span<const std::uint64_t> blocks, int count, Path& path) {
  path.clear();
  ++clock_;
  int node = -1;
  for (int b = 0; b < count; ++b) {
    node = child(node, blocks[static_cast<std::size_t>(b)]);
    take_hold(node);
    nodes_[node].last_use = clock_;  // held: out of the eviction order while it changes
    path.push_back(node);
  }
}

long long PrefixCache::insert(std::span<const std::uint64_t> blocks, Path& path) {
  ++clock_;
  for (const int node : path) nodes_[node].last_use = clock_;
  long long added = 0;
  for (std::size_t b = path.size(); b < blocks.size(); ++b) {
    const int parent = path.empty() ? -1 : path.back();
    int node = child(parent, blocks[b]);
    if (node < 0) {
      if (free_nodes_.empty()) {
        node = static_cast<int>(nodes_.size());
        nodes_.emplace_back();
      } else {
        node = free_nodes_.back();
        free_nodes_.pop_back();
      }
      nodes_[node] = {blocks[b], parent, static_cast<int>(b) + 1, 0, 0, 0};
      children_.emplace(ChildKey{parent, blocks[b]}, node);
      if (parent >= 0) ++nodes_[parent].children;
      ++blocks_;
      added += block_tokens_;
    }
    take_hold(node);
    nodes_[node].last_use = clock_;
    path.push_back(node);
  }
  return added;
}

void PrefixCache::release(const Path& path) {
  for (const int node : path)
    if (--nodes_[node].holders == 0) {
      evictable_.insert(eviction_key(node));
      --held_blocks_;
    }
}

long long PrefixCache::evict(long long tokens) {
  long long freed = 0;
  while (freed < tokens && !evictable_.empty()) {
    const int node = std::get<2>(*evictable_.begin());
    Node& n = nodes_[node];
    if (n.children > 0) throw std::logic_error("prefix cache: the least recently used block has children");
    evictable_.erase(evictable_.begin());
    children_.erase({n.parent, n.id});
    if (n.parent >= 0) --nodes_[n.parent].children;
    free_nodes_.push_back(node);
    --blocks_;
    ++evicted_blocks_;
    freed += block_tokens_;
  }
  return freed;
}

std::span<const std::uint64_t> full_prefix_blocks(const Request& request, int block_tokens) {
  const auto full =
      std::min(request.prefix_blocks.size(), static_cast<std::size_t>(request.input_tokens / block_tokens));
  return std::span<const std::uint64_t>(request.prefix_blocks).first(full);
}

std::span<const std::uint64_t> finished_sequence_blocks(const Request& request, int generated,
                                                        int block_tokens) {
  const auto filled = static_cast<std::size_t>((request.input_tokens + generated - 1) / block_tokens);
  return std::span<const std::uint64_t>(request.prefix_blocks)
      .first(std::min(request.prefix_blocks.size(), filled));
}

long long cached_prefix_tokens(const PrefixCache& cache, const Request& request) {
  const long long matched = cache.match(full_prefix_blocks(request, cache.block_tokens()));
  return std::min(matched * cache.block_tokens(), static_cast<long long>(request.input_tokens) - 1);
}

}  // namespace semsim
