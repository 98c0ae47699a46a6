#include "policies/sglang_expert_location.hpp"

#include <gtest/gtest.h>

#include <string>

#include "models/input_error.hpp"

namespace semsim {
namespace {

// Three decoder layers, the first dense (DeepSeek's first_k_dense_replace 1), four routed experts.
MoeModel deepseek_like() {
  MoeModel model;
  model.name = "tiny";
  model.layers = 3;
  model.first_dense_layers = 1;
  model.routed_experts = 4;
  return model;
}

// Four decoder layers, every second one MoE (Llama-4's interleave: layers 1 and 3).
MoeModel interleaved() {
  MoeModel model = deepseek_like();
  model.name = "interleaved";
  model.layers = 4;
  model.first_dense_layers = 0;
  model.moe_layer_interval = 2;
  return model;
}

// Two MoE layers on two GPUs of three slots each (two redundant experts per layer), in slot orders
// that are not sorted, so the test sees that the order survives.
Placement replicated_placement() {
  Placement p;
  p.moe_layers = 2;
  p.experts = 4;
  p.devices = 2;
  p.slots = {{{2, 0, 1}, {3, 2, 1}}, {{1, 3, 0}, {0, 2, 3}}};
  p.seal();
  return p;
}

TEST(SglangExpertLocation, ExportsOneRowPerDecoderLayerWithTheDenseRowsTrivial) {
  const SglangExpertLocation location = sglang_expert_location(replicated_placement(), deepseek_like());
  EXPECT_EQ(location.slots_per_gpu, 3);
  EXPECT_EQ(location.redundant_experts, 2);
  EXPECT_EQ(location.json,
            "{\"physical_to_logical_map\": [\n"
            "  [0, 1, 2, 3, 0, 1],\n"
            "  [2, 0, 1, 3, 2, 1],\n"
            "  [1, 3, 0, 0, 2, 3]\n"
            "]}\n");
  const std::string rows = sglang_expert_location(replicated_placement(), interleaved()).json;
  EXPECT_NE(
      rows.find("[0, 1, 2, 3, 0, 1],\n  [2, 0, 1, 3, 2, 1],\n  [0, 1, 2, 3, 0, 1],\n  [1, 3, 0, 0, 2, 3]\n"),
      std::string::npos)
      << rows;
}

TEST(SglangExpertLocation, RoundTripGivesBackTheSameSlots) {
  for (const MoeModel& model : {deepseek_like(), interleaved()}) {
    const Placement placement = replicated_placement();
    const std::string json = sglang_expert_location(placement, model).json;
    EXPECT_EQ(placement_from_sglang(json, "f.json", model, 2, 2), placement) << model.name;
  }
  // Two nodes of one GPU: the same slots, the node size is what the caller says.
  const Placement two_nodes = placement_from_sglang(
      sglang_expert_location(replicated_placement(), deepseek_like()).json, "f.json", deepseek_like(), 2, 1);
  EXPECT_EQ(two_nodes.slots, replicated_placement().slots);
  EXPECT_EQ(two_nodes.devices_per_node, 1);
}

// The file as SGLang's own tooling writes it (json.dumps: one line, ", " separators); the dense row
// is not a placement, so its ids need only be in range.
TEST(SglangExpertLocation, ImportsSglangsOwnJsonShape) {
  const std::string file =
      R"({"physical_to_logical_map": [[3, 3, 3, 3, 3, 3, 3, 3], [0, 1, 2, 3, 3, 2, 1, 0], [0, 1, 2, 3, 0, 1, 2, 3]]})";
  const Placement p = placement_from_sglang(file, "sglang.json", deepseek_like(), 4, 2);
  EXPECT_EQ(p.moe_layers, 2);
  EXPECT_EQ(p.devices, 4);
  EXPECT_EQ(p.devices_per_node, 2);
  const std::vector<std::vector<std::vector<int>>> slots{{{0, 1}, {2, 3}, {3, 2}, {1, 0}},
                                                         {{0, 1}, {2, 3}, {0, 1}, {2, 3}}};
  EXPECT_EQ(p.slots, slots);
  EXPECT_EQ(p.replica_count(0, 3), 2);
  EXPECT_TRUE(p.hosts(1, 2, 3));
  EXPECT_FALSE(p.hosts(1, 2, 2));
}

TEST(SglangExpertLocation, ExportRefusesUnequalSlotCountsNamingTheDevices) {
  Placement within = replicated_placement();
  within.slots[1] = {{0, 1, 2, 3}, {1, 2}};
  within.seal();
  try {
    sglang_expert_location(within, deepseek_like());
    FAIL() << "exported";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("same number of physical expert slots in every layer: MoE layer 1: 4 "
                                   "slots on device 0; 2 slots on device 1"),
        std::string::npos)
        << e.what();
  }
  Placement across = replicated_placement();
  across.slots[0] = {{0, 1}, {2, 3}};
  across.seal();
  try {
    sglang_expert_location(across, deepseek_like());
    FAIL() << "exported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("MoE layer 1: 3 slots on devices 0, 1, but MoE layer 0: 2 slots on "
                                         "devices 0, 1"),
              std::string::npos)
        << e.what();
  }
  MoeModel other = deepseek_like();
  other.routed_experts = 8;
  EXPECT_THROW(sglang_expert_location(replicated_placement(), other), InputError);
}

struct BadFile {
  std::string name;
  std::string json;
  int gpus;
  std::string message;
};

class BadSglangFile : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadSglangFile, IsRejectedNamingFileAndKey) {
  const BadFile& c = GetParam();
  try {
    placement_from_sglang(c.json, "loc.json", deepseek_like(), c.gpus, 1);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
  }
}

constexpr const char* kDense = "[0, 1, 2, 3]";

std::string map_of(const std::string& moe_rows) {
  return std::string(R"({"physical_to_logical_map": [)") + kDense + ", " + moe_rows + "]}";
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, BadSglangFile,
    ::testing::Values(
        BadFile{"NotJson", "{\"physical_to_logical_map\": [", 2, "loc.json:1:30: not valid JSON"},
        BadFile{"NotAnObject", "[[0, 1, 2, 3]]", 2, "loc.json: expected a JSON object"},
        BadFile{"ExpertLoads", R"({"logical_count": [[1, 2, 3, 4]]})", 2,
                "loc.json: logical_count: this file holds expert loads"},
        BadFile{"UnknownKey", R"({"physical_to_logical_mapp": []})", 2,
                "loc.json: physical_to_logical_mapp: unknown key: SGLang's file holds only "
                "physical_to_logical_map (did you mean 'physical_to_logical_map'?)"},
        BadFile{"ExtraKey", map_of("[0, 1, 2, 3], [0, 1, 2, 3]").insert(1, R"("ep_size": 2, )"), 2,
                "loc.json: ep_size: unknown key"},
        BadFile{"NoMap", "{}", 2, "loc.json: no 'physical_to_logical_map' key"},
        BadFile{"RowsNotAnArray", R"({"physical_to_logical_map": 3})", 2,
                "loc.json: physical_to_logical_map: expected an array of rows"},
        BadFile{"MoeRowsOnly", R"({"physical_to_logical_map": [[0, 1, 2, 3], [0, 1, 2, 3]]})", 2,
                "2 rows, but tiny has 3 decoder layers (2 of them MoE): SGLang indexes the rows by decoder "
                "layer"},
        BadFile{"RowNotAnArray", R"({"physical_to_logical_map": [0, [0, 1, 2, 3], [0, 1, 2, 3]]})", 2,
                "loc.json: physical_to_logical_map[0]: expected a row of logical expert ids"},
        BadFile{"UnequalRows", map_of("[0, 1, 2, 3], [0, 1, 2, 3, 0, 1]"), 2,
                "loc.json: physical_to_logical_map[2]: expected a row of 4 logical expert ids, as row 0"},
        BadFile{"FewerSlotsThanExperts", R"({"physical_to_logical_map": [[0, 1], [0, 1], [0, 1]]})", 2,
                "loc.json: physical_to_logical_map[0]: 2 physical experts, fewer than the 4 logical experts "
                "of tiny"},
        BadFile{"SlotsNotDividingOverGpus", map_of("[0, 1, 2, 3], [0, 1, 2, 3]"), 3,
                "loc.json: physical_to_logical_map[0]: 4 physical experts do not divide over 3 GPUs"},
        BadFile{"IdOutOfRange", map_of("[0, 1, 2, 4], [0, 1, 2, 3]"), 2,
                "loc.json: physical_to_logical_map[1][3]: logical expert 4 out of range [0, 4) of tiny"},
        BadFile{"NegativeId", map_of("[0, 1, 2, 3], [0, -1, 2, 3]"), 2,
                "loc.json: physical_to_logical_map[2][1]: logical expert -1 out of range"},
        BadFile{"DenseRowIdOutOfRange",
                R"({"physical_to_logical_map": [[0, 1, 2, 9], [0, 1, 2, 3], [0, 1, 2, 3]]})", 2,
                "loc.json: physical_to_logical_map[0][3]: logical expert 9 out of range"},
        BadFile{"FloatId", map_of("[0.0, 1, 2, 3], [0, 1, 2, 3]"), 2,
                "loc.json: physical_to_logical_map[1][0]: a logical expert id must be an integer"},
        BadFile{
            "ExpertMissing", map_of("[0, 1, 2, 3], [0, 1, 2, 2]"), 4,
            "loc.json: physical_to_logical_map[2]: logical expert 3 has no physical slot (decoder layer 2 "
            "is MoE layer 1 of tiny)"},
        BadFile{
            "ExpertTwiceOnOneGpu",
            R"({"physical_to_logical_map": [[0, 1, 2, 3, 0, 1], [0, 1, 0, 2, 3, 1], [0, 1, 2, 3, 0, 1]]})", 2,
            "loc.json: physical_to_logical_map[1][2]: GPU 0 holds logical expert 0 in two slots (physical "
            "experts 0 and 2)"}),
    [](const ::testing::TestParamInfo<BadFile>& info) { return info.param.name; });

}  // namespace
}  // namespace semsim
