// The equal-shard collectives' traffic: NCCL's direct exchange inside a node, its rings' per-NIC
// bytes across nodes.
#include "sim/collectives.hpp"

#include <gtest/gtest.h>

#include "tests/sim/topology_fixture.hpp"

namespace semsim {
namespace {

TEST(ShardExchangePairs, WithinOneNodeEveryPairExchangesOneShard) {
  EXPECT_EQ(shard_exchange_pairs(4, 8), every_pair(4));
  EXPECT_EQ(shard_exchange_pairs(8, 8), every_pair(8));
}

TEST(ShardExchangePairs, AcrossNodesEachNicCarriesTheBufferOverItsNodesGpus) {
  // TP16 over two nodes of 8: a buffer of 16 MB per rank, shards of 1 MB.
  const Topology topology = test::build_topology(2, FabricKind::kFatTree);
  const std::vector<long long> pairs = shard_exchange_pairs(16, 8);
  const double shard = 1e6;
  const Collective exchange = equal_shard_exchange(pairs, 16, shard, 0);
  const LevelBytes bytes = level_bytes(exchange.traffic, topology);
  // Inside each node the buffer is reduced to 8 shards of 2 MB: 7 of them leave each GPU.
  EXPECT_DOUBLE_EQ(bytes.scale_up, 16 * 7 * 2e6);
  // Then each GPU exchanges half of its 2 MB shard with its peer in the other node: 1 MB over its NIC
  // (the direct exchange sent 8 shards, 8 MB, over each NIC).
  EXPECT_DOUBLE_EQ(bytes.scale_out, 16 * 1e6);
  EXPECT_EQ(pairs[0 * 16 + 8], 1);
  EXPECT_EQ(pairs[0 * 16 + 9], 0);
  EXPECT_EQ(pairs[0 * 16 + 1], 2);
  EXPECT_EQ(pairs[3 * 16 + 3], 0);
}

TEST(ShardExchangePairs, FourNodesSendThreeQuartersOfTheNodeShardAcross) {
  const Topology topology = test::build_topology(4, FabricKind::kFatTree);
  const double shard = 1e6;  // a buffer of 32 MB per rank over 32 ranks
  const LevelBytes bytes =
      level_bytes(equal_shard_exchange(shard_exchange_pairs(32, 8), 32, shard, 0).traffic, topology);
  // A node's shard is 4 MB; each GPU sends 3 of its 4 quarters to the other nodes' peers.
  EXPECT_DOUBLE_EQ(bytes.scale_out, 32 * 3e6);
  EXPECT_DOUBLE_EQ(bytes.scale_up, 32 * 7 * 4e6);
}

}  // namespace
}  // namespace semsim
