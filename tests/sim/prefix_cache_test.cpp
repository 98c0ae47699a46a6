// The prefix cache's radix tree by hand: what a request finds cached, what it holds, and which
// blocks eviction takes (least recently used, leaves before their parents, never a held one).
#include "sim/prefix_cache.hpp"

#include <gtest/gtest.h>

namespace semsim {
namespace {

Request prompt(int input_tokens, std::vector<std::uint64_t> blocks) {
  Request r;
  r.input_tokens = input_tokens;
  r.prefix_blocks = std::move(blocks);
  return r;
}

TEST(PrefixCache, HitsAndEvictionsOfAHandMadeSequence) {
  PrefixCache cache(4);
  const std::vector<std::uint64_t> a{1, 2, 3}, b{1, 2, 9}, c{1, 2, 3, 4};
  PrefixCache::Path path_a, path_b, path_c;

  // A finds nothing and caches its three blocks.
  EXPECT_EQ(cache.match(a), 0);
  cache.hold(a, 0, path_a);
  EXPECT_EQ(cache.insert(a, path_a), 12);
  EXPECT_EQ(cache.tokens(), 12);
  EXPECT_EQ(cache.held_tokens(), 12);

  // B shares A's first two blocks (held by A: no room to take from eviction) and adds its third.
  EXPECT_EQ(cache.match(b), 2);
  EXPECT_EQ(cache.unheld_tokens(b, 2), 0);
  cache.hold(b, 2, path_b);
  EXPECT_EQ(cache.insert(b, path_b), 4);
  EXPECT_EQ(cache.tokens(), 16);
  EXPECT_EQ(path_b.size(), 3u);

  // A done: only its own third block is free; B done: all four.
  cache.release(path_a);
  EXPECT_EQ(cache.held_tokens(), 12);
  cache.release(path_b);
  EXPECT_EQ(cache.held_tokens(), 0);
  EXPECT_EQ(cache.tokens(), 16);

  // C would find A's three blocks, all unheld.
  EXPECT_EQ(cache.match(c), 3);
  EXPECT_EQ(cache.unheld_tokens(c, 3), 12);
  // Freeing 5 tokens takes two blocks: A's third (used last by A's insert, before B's) first, then
  // B's third (a leaf of B's later use) before the shared blocks, its parents.
  EXPECT_EQ(cache.evict(5), 8);
  EXPECT_EQ(cache.evicted_blocks(), 2);
  EXPECT_EQ(cache.tokens(), 8);
  EXPECT_EQ(cache.match(c), 2);
  EXPECT_EQ(cache.match(b), 2);

  // Held blocks are never evicted.
  cache.hold(c, 2, path_c);
  EXPECT_EQ(cache.evict(100), 0);
  EXPECT_EQ(cache.tokens(), 8);
  cache.release(path_c);
  EXPECT_EQ(cache.evict(100), 8);
  EXPECT_EQ(cache.evicted_blocks(), 4);
  EXPECT_EQ(cache.tokens(), 0);
  EXPECT_EQ(cache.match(a), 0);
}

// A block id means the same block only after the same ids: the tree keys each by its parent.
TEST(PrefixCache, SameIdAfterADifferentPrefixIsAnotherBlock) {
  PrefixCache cache(4);
  const std::vector<std::uint64_t> a{1, 2}, b{7, 2};
  PrefixCache::Path path;
  cache.hold(a, 0, path);
  cache.insert(a, path);
  EXPECT_EQ(cache.match(b), 0);
  EXPECT_EQ(cache.match(std::vector<std::uint64_t>{1, 5}), 1);
}

// A block another request inserted meanwhile is shared, not added twice.
TEST(PrefixCache, InsertingACachedBlockSharesIt) {
  PrefixCache cache(4);
  const std::vector<std::uint64_t> blocks{1, 2};
  PrefixCache::Path first, second;
  cache.hold(blocks, 0, first);
  cache.hold(blocks, 0, second);
  EXPECT_EQ(cache.insert(blocks, first), 8);
  EXPECT_EQ(cache.insert(blocks, second), 0);
  EXPECT_EQ(cache.tokens(), 8);
  cache.release(first);
  EXPECT_EQ(cache.held_tokens(), 8);
  cache.release(second);
  EXPECT_EQ(cache.held_tokens(), 0);
}

// What a scheduler or router asks: the cached prefix, in full blocks the prompt fills, short of its
// last token.
TEST(PrefixCache, CachedPrefixTokensOfARequest) {
  PrefixCache cache(4);
  const std::vector<std::uint64_t> blocks{1, 2};
  PrefixCache::Path path;
  cache.hold(blocks, 0, path);
  cache.insert(blocks, path);
  EXPECT_EQ(cached_prefix_tokens(cache, prompt(10, {1, 2, 3})), 8);
  EXPECT_EQ(cached_prefix_tokens(cache, prompt(8, {1, 2})), 7);  // its last token runs
  EXPECT_EQ(cached_prefix_tokens(cache, prompt(7, {1, 2})), 4);  // the second block is partial
  EXPECT_EQ(cached_prefix_tokens(cache, prompt(10, {2, 1})), 0);
  EXPECT_EQ(cached_prefix_tokens(cache, prompt(10, {})), 0);
  EXPECT_EQ(full_prefix_blocks(prompt(7, {1, 2}), 4).size(), 1u);
}

}  // namespace
}  // namespace semsim
