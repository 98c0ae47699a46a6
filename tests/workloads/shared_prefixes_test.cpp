// Synthetic prefix identities (workload.prefix): which requests share, what their blocks are, and
// the scenario errors.
#include "workloads/shared_prefixes.hpp"

#include <gtest/gtest.h>

#include <map>

#include "models/input_error.hpp"

namespace semsim {
namespace {

std::vector<Request> requests_of(int count, int input_tokens) {
  std::vector<Request> requests(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    requests[i].id = i;
    requests[i].input_tokens = input_tokens;
  }
  return requests;
}

SharedPrefixes prefixes(int groups, int length, double share, int block_tokens) {
  return SharedPrefixes::from_yaml(YamlInput::parse(
      "{groups: " + std::to_string(groups) + ", length: " + std::to_string(length) +
          ", share: " + std::to_string(share) + ", block_tokens: " + std::to_string(block_tokens) + "}",
      "w.yaml"));
}

TEST(SharedPrefixes, SharersStartWithTheirGroupsBlocksAndTheRestIsTheirOwn) {
  std::vector<Request> requests = requests_of(4000, 300);
  assign_shared_prefixes(prefixes(3, 200, 0.5, 64), 7, requests);
  // 300 tokens: 4 full blocks; a 200-token prefix shares the first 3 (the fourth is partial).
  std::map<std::uint64_t, int> first_block_users;
  int sharers = 0;
  for (const Request& r : requests) {
    ASSERT_EQ(r.prefix_blocks.size(), 4u);
    ++first_block_users[r.prefix_blocks[0]];
  }
  for (const auto& [id, users] : first_block_users)
    if (users > 1) sharers += users;
  EXPECT_EQ(std::count_if(first_block_users.begin(), first_block_users.end(),
                          [](const auto& entry) { return entry.second > 1; }),
            3);  // one first block per group
  EXPECT_NEAR(sharers / 4000.0, 0.5, 0.03);
  // Two sharers of a group agree on its three blocks and differ in their fourth.
  const Request* first = nullptr;
  for (const Request& r : requests) {
    if (first_block_users[r.prefix_blocks[0]] < 2) continue;
    if (!first) {
      first = &r;
      continue;
    }
    if (r.prefix_blocks[0] != first->prefix_blocks[0]) continue;
    EXPECT_EQ(std::vector<std::uint64_t>(r.prefix_blocks.begin(), r.prefix_blocks.begin() + 3),
              std::vector<std::uint64_t>(first->prefix_blocks.begin(), first->prefix_blocks.begin() + 3));
    EXPECT_NE(r.prefix_blocks[3], first->prefix_blocks[3]);
    break;
  }
}

TEST(SharedPrefixes, SeededAndShareBounds) {
  std::vector<Request> a = requests_of(200, 1000), b = requests_of(200, 1000), c = requests_of(200, 1000);
  assign_shared_prefixes(prefixes(4, 512, 0.3, 64), 1, a);
  assign_shared_prefixes(prefixes(4, 512, 0.3, 64), 1, b);
  assign_shared_prefixes(prefixes(4, 512, 0.3, 64), 2, c);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].prefix_blocks, b[i].prefix_blocks);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) differs = differs || a[i].prefix_blocks != c[i].prefix_blocks;
  EXPECT_TRUE(differs);
  // share 0: nothing shared; share 1, one group: every first block the same. A prompt shorter than
  // the prefix shares all its full blocks.
  std::vector<Request> none = requests_of(50, 1000), all = requests_of(50, 100);
  assign_shared_prefixes(prefixes(1, 512, 0, 64), 1, none);
  assign_shared_prefixes(prefixes(1, 512, 1, 64), 1, all);
  for (std::size_t i = 1; i < none.size(); ++i) {
    EXPECT_NE(none[i].prefix_blocks[0], none[0].prefix_blocks[0]);
    EXPECT_EQ(all[i].prefix_blocks, all[0].prefix_blocks);
  }
  EXPECT_EQ(all[0].prefix_blocks.size(), 1u);  // 100 tokens: one full block of 64
}

TEST(SharedPrefixes, BadKeysNameTheirPlace) {
  auto error = [](const std::string& text) {
    try {
      SharedPrefixes::from_yaml(YamlInput::parse(text, "w.yaml"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(
      error("{groups: 2, length: 100, share: 1.5}").find("w.yaml:1:33: share: must be in [0, 1], got 1.5"),
      std::string::npos)
      << error("{groups: 2, length: 100, share: 1.5}");
  EXPECT_NE(error("{groups: 0, length: 100, share: 0.5}").find("groups"), std::string::npos);
  EXPECT_NE(error("{groups: 2, share: 0.5}").find("length"), std::string::npos);
  EXPECT_NE(error("{groups: 2, length: 100, share: 0.5, turns: 3}").find("turns"), std::string::npos);
  EXPECT_EQ(error("{groups: 2, length: 100, share: 0.5}"), "");
}

}  // namespace
}  // namespace semsim
