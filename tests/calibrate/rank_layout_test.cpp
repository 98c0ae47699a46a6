// Rank layouts against hand-computed cases: node and local index, rails, the pairs measured
// between nodes and the sub-communicators over 2 .. N nodes.
#include "calibrate/runtime/rank_layout.hpp"

#include <gtest/gtest.h>

#include "models/input_error.hpp"

namespace semsim {
namespace {

TEST(RankLayout, NodesLocalIndicesAndRails) {
  const RankLayout layout(3, 4);  // ranks 0-3 node 0, 4-7 node 1, 8-11 node 2
  EXPECT_EQ(layout.ranks(), 12);
  EXPECT_EQ(layout.node_of(7), 1);
  EXPECT_EQ(layout.local_of(7), 3);
  EXPECT_EQ(layout.node_of(8), 2);
  EXPECT_EQ(layout.rank_of(2, 1), 9);
  EXPECT_TRUE(layout.same_rail(1, 9));
  EXPECT_TRUE(layout.same_rail(4, 0));
  EXPECT_FALSE(layout.same_rail(1, 10)) << "another rail";
  EXPECT_FALSE(layout.same_rail(1, 1 + 0)) << "one GPU";
  EXPECT_FALSE(layout.same_rail(0, 1)) << "one node: no rail crossed";
}

TEST(RankLayout, PairsAndGroupsMeasuredAcrossNodes) {
  const RankLayout layout(3, 4);
  EXPECT_EQ(layout.inter_node_pairs(), (std::vector<RankPair>{{0, 4, true}, {0, 5, false}}));
  EXPECT_EQ(layout.scaleup_group_sizes(), (std::vector<int>{4, 3, 2}));
  EXPECT_EQ(layout.scaleout_group_nodes(), (std::vector<int>{3, 2}));
  const RankLayout one_gpu_nodes(2, 1);
  EXPECT_EQ(one_gpu_nodes.inter_node_pairs(), (std::vector<RankPair>{{0, 1, true}})) << "no second rail";
  EXPECT_TRUE(one_gpu_nodes.scaleup_group_sizes().empty());
  const RankLayout one_node(1, 8);
  EXPECT_TRUE(one_node.inter_node_pairs().empty());
  EXPECT_TRUE(one_node.scaleout_group_nodes().empty());
  EXPECT_THROW(RankLayout(0, 8), InputError);
}

}  // namespace
}  // namespace semsim
