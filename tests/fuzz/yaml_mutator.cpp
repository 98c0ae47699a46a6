#include "tests/fuzz/yaml_mutator.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "policies/policy_registry.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace semsim::fuzz {
namespace {

// Values at the edges of what validators check: zero, negative, huge, tiny, not finite, overflowing
// integer casts, empty, wrong types, names that exist elsewhere in the schema (with every registered
// policy's: mutation_values()).
const std::vector<std::string> kEdgeValues = {"0",
                                              "-1",
                                              "1",
                                              "2",
                                              "0.5",
                                              "1e300",
                                              "-1e300",
                                              "1e-300",
                                              "nan",
                                              ".nan",
                                              ".inf",
                                              "-.inf",
                                              "2147483647",
                                              "2147483648",
                                              "-2147483649",
                                              "9223372036854775807",
                                              "18446744073709551616",
                                              "1e18",
                                              "''",
                                              "~",
                                              "true",
                                              "[]",
                                              "{}",
                                              "[1, 2, 3]",
                                              "{a: 1}",
                                              "[[]]",
                                              "default",
                                              "dp",
                                              "tp",
                                              "h200-1x8",
                                              "h200-2x8",
                                              "deepseek-v2-lite",
                                              "qwen3-30b-a3b",
                                              "synthetic",
                                              "trace",
                                              "fixed",
                                              "poisson",
                                              "gamma",
                                              "flow",
                                              "bottleneck",
                                              "'\\xff'",
                                              "\"a\\tb\"",
                                              "'../..'",
                                              "/dev/zero"};

// The edge values and every registered policy's name, from the registry itself: a hand-kept list of
// them missed cost_scored.
const std::vector<std::string>& mutation_values() {
  static const std::vector<std::string> values = [] {
    std::vector<std::string> all = kEdgeValues;
    for (const PolicyKindInfo& kind : policy_kinds())
      for (const PolicyEntry& entry : policies_of(kind.kind))
        if (std::find(all.begin(), all.end(), entry.name) == all.end()) all.push_back(entry.name);
    return all;
  }();
  return values;
}

struct Slot {
  YAML::Node parent;  // a map or sequence
  YAML::Node key;     // for a map entry; null for a sequence item
  std::size_t index = 0;
};

// At most this many slots: an alias-expanded document (an alias bomb among the seeds) is huge.
constexpr std::size_t kMaxSlots = 4096;

void collect(const YAML::Node& node, std::vector<Slot>& slots, std::vector<std::string>& keys, int depth) {
  if (depth > 8 || slots.size() >= kMaxSlots) return;
  if (node.IsMap()) {
    for (const auto& entry : node) {
      if (slots.size() >= kMaxSlots) return;
      slots.push_back({node, entry.first, 0});
      if (entry.first.IsScalar()) keys.push_back(entry.first.Scalar());
      collect(entry.second, slots, keys, depth + 1);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size() && slots.size() < kMaxSlots; ++i) {
      slots.push_back({node, YAML::Node(), i});
      collect(node[i], slots, keys, depth + 1);
    }
  }
}

YAML::Node parse_value(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception&) {
    return YAML::Node(text);
  }
}

// One mutation of `root` (a map); false when it found nothing to change.
bool mutate_document(YAML::Node& root, std::mt19937& rng) {
  std::vector<Slot> slots;
  std::vector<std::string> keys;
  collect(root, slots, keys, 0);
  if (slots.empty()) return false;
  if (keys.empty()) keys.push_back("name");  // only non-scalar keys: renames and additions need one
  Slot& slot = slots[rng() % slots.size()];
  const std::vector<std::string>& values = mutation_values();
  const std::string value = values[rng() % values.size()];
  const bool in_map = slot.parent.IsMap();
  switch (rng() % 6) {
    case 0:  // remove the entry
      if (in_map) {
        slot.parent.remove(slot.key);
      } else {
        YAML::Node kept(YAML::NodeType::Sequence);
        for (std::size_t i = 0; i < slot.parent.size(); ++i)
          if (i != slot.index) kept.push_back(slot.parent[i]);
        slot.parent = kept;
      }
      return true;
    case 1:  // rename the key (a known key of another place, or a typo)
      if (in_map && slot.key.IsScalar()) {
        std::string name = rng() % 2 ? keys[rng() % keys.size()] : slot.key.Scalar() + "x";
        YAML::Node moved = YAML::Clone(slot.parent[slot.key]);
        slot.parent.remove(slot.key);
        slot.parent[name] = moved;
        return true;
      }
      [[fallthrough]];
    case 2:  // add an entry beside it
      if (in_map) {
        slot.parent[keys[rng() % keys.size()]] = parse_value(value);
      } else {
        slot.parent.push_back(parse_value(value));
      }
      return true;
    default:  // replace the value
      if (in_map) {
        slot.parent[slot.key] = parse_value(value);
      } else {
        slot.parent[slot.index] = parse_value(value);
      }
      return true;
  }
}

}  // namespace

std::size_t mutate_yaml(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 4 != 0) {
    try {
      YAML::Node root = YAML::Load(std::string(reinterpret_cast<const char*>(data), size));
      if (root.IsMap() && mutate_document(root, rng)) {
        YAML::Emitter out;
        out << root;
        if (out.good() && out.size() <= max_size) {
          std::memcpy(data, out.c_str(), out.size());
          return out.size();
        }
      }
    } catch (const YAML::Exception&) {
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

}  // namespace semsim::fuzz
