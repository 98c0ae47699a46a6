#include "policies/sglang_expert_location.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "models/input_error.hpp"
#include "models/json_input.hpp"

namespace semsim {
namespace {

constexpr const char* kMapKey = "physical_to_logical_map";

// "device 3", "devices 1, 2, 3" or, for many, "40 devices (0, 1, 2, 3, 4, 5, 6, 7, ...)".
std::string device_list(const std::vector<int>& devices) {
  constexpr std::size_t kShown = 8;
  if (devices.size() == 1) return fmt::format("device {}", devices[0]);
  if (devices.size() <= kShown) return fmt::format("devices {}", fmt::join(devices, ", "));
  return fmt::format("{} devices ({}, ...)", devices.size(),
                     fmt::join(devices.begin(), devices.begin() + kShown, ", "));
}

// "17 slots on device 0; 16 slots on devices 1, 2, 3": the devices of `layer` by slot count.
std::string slot_counts(const Placement& placement, int layer) {
  std::map<std::size_t, std::vector<int>> devices_by_count;
  for (int device = 0; device < placement.devices; ++device)
    devices_by_count[placement.slots[layer][device].size()].push_back(device);
  std::vector<std::string> parts;
  for (auto it = devices_by_count.rbegin(); it != devices_by_count.rend(); ++it)
    parts.push_back(fmt::format("{} slots on {}", it->first, device_list(it->second)));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The physical slots every device holds in every layer; InputError naming the first layer where a
// device holds another number.
int equal_slots_per_device(const Placement& placement) {
  const std::size_t slots = placement.slots[0][0].size();
  for (int layer = 0; layer < placement.moe_layers; ++layer) {
    const auto& devices = placement.slots[layer];
    if (std::all_of(devices.begin(), devices.end(), [&](const auto& held) { return held.size() == slots; }))
      continue;
    const bool uniform_in_layer = std::all_of(
        devices.begin(), devices.end(), [&](const auto& held) { return held.size() == devices[0].size(); });
    throw InputError(fmt::format(
        "cannot export to SGLang's format, which gives every GPU the same number of physical expert slots "
        "in every layer: MoE layer {}: {}{}",
        layer, slot_counts(placement, layer),
        uniform_in_layer ? fmt::format(", but MoE layer 0: {}", slot_counts(placement, 0)) : ""));
  }
  return static_cast<int>(slots);
}

[[noreturn]] void fail(const std::string& file, const std::string& key, const std::string& message) {
  throw InputError(key.empty() ? fmt::format("{}: {}", file, message)
                               : fmt::format("{}: {}: {}", file, key, message));
}

}  // namespace

SglangExpertLocation sglang_expert_location(const Placement& placement, const MoeModel& model) {
  if (placement.moe_layers != model.moe_layers() || placement.experts != model.routed_experts)
    throw InputError(fmt::format("the placement has {} MoE layers of {} experts, {} has {} of {}",
                                 placement.moe_layers, placement.experts, model.name, model.moe_layers(),
                                 model.routed_experts));
  SglangExpertLocation location;
  location.slots_per_gpu = equal_slots_per_device(placement);
  const int physical = location.slots_per_gpu * placement.devices;
  location.redundant_experts = physical - placement.experts;

  auto out = std::back_inserter(location.json);
  fmt::format_to(out, "{{\"{}\": [\n", kMapKey);
  std::vector<int> row;
  for (int layer = 0, moe = 0; layer < model.layers; ++layer) {
    row.clear();
    if (model.is_moe_layer(layer)) {
      for (const std::vector<int>& held : placement.slots[moe])
        row.insert(row.end(), held.begin(), held.end());
      ++moe;
    } else {
      for (int p = 0; p < physical; ++p) row.push_back(p % placement.experts);
    }
    fmt::format_to(out, "  [{}]{}\n", fmt::join(row, ", "), layer + 1 < model.layers ? "," : "");
  }
  location.json += "]}\n";
  return location;
}

namespace {

// The rows of SGLang's file, one per decoder layer, checked to be that alone.
const nlohmann::json& sglang_rows(const nlohmann::json& document, const std::string& file,
                                  const MoeModel& model) {
  if (!document.is_object())
    fail(file, "",
         fmt::format("expected a JSON object {{\"{}\": [[...], ...]}} (SGLang's --init-expert-location file)",
                     kMapKey));
  for (const auto& [key, value] : document.items()) {
    if (key == kMapKey) continue;
    if (key == "logical_count")
      fail(file, key,
           "this file holds expert loads, which SGLang turns into a placement by its own EPLB at start-up; "
           "semsim imports placements (physical_to_logical_map)");
    fail(file, key,
         fmt::format("unknown key: SGLang's file holds only {}{}", kMapKey, did_you_mean(key, {kMapKey})));
  }
  if (!document.contains(kMapKey)) fail(file, "", fmt::format("no '{}' key", kMapKey));
  const nlohmann::json& rows = document.at(kMapKey);
  if (!rows.is_array()) fail(file, kMapKey, "expected an array of rows, one per decoder layer");
  if (rows.size() != static_cast<std::size_t>(model.layers))
    fail(file, kMapKey,
         fmt::format("{} rows, but {} has {} decoder layers ({} of them MoE): SGLang indexes the rows by "
                     "decoder layer, dense layers included",
                     rows.size(), model.name, model.layers, model.moe_layers()));
  return rows;
}

// The physical experts of the first row, which every row must have: at least the logical ones, an
// equal number per GPU.
int physical_experts(const nlohmann::json& rows, const std::string& file, const MoeModel& model, int gpus) {
  const int experts = model.routed_experts;
  if (!rows[0].is_array()) fail(file, fmt::format("{}[0]", kMapKey), "expected a row of logical expert ids");
  const auto physical = static_cast<int>(rows[0].size());
  if (physical < experts)
    fail(file, fmt::format("{}[0]", kMapKey),
         fmt::format("{} physical experts, fewer than the {} logical experts of {}", physical, experts,
                     model.name));
  if (physical % gpus != 0)
    fail(file, fmt::format("{}[0]", kMapKey),
         fmt::format("{} physical experts do not divide over {} GPUs (SGLang gives each GPU the same number)",
                     physical, gpus));
  return physical;
}

// The file's rows as every one must be: `physical` logical expert ids, `slots_per_gpu` per GPU.
struct SglangRows {
  const std::string& file;
  const MoeModel& model;
  int physical = 0, slots_per_gpu = 0;
};

// Decoder layer `layer`'s row: checked whatever the layer, placed into `slots` (its GPUs' experts)
// when it is MoE layer `moe`, where every logical expert must have a slot, on a GPU at most once.
void read_sglang_row(const nlohmann::json& row, int layer, int moe, const SglangRows& shape,
                     std::vector<std::vector<int>>* slots) {
  const std::string& file = shape.file;
  const MoeModel& model = shape.model;
  const int experts = model.routed_experts, physical = shape.physical, slots_per_gpu = shape.slots_per_gpu;
  const std::string row_key = fmt::format("{}[{}]", kMapKey, layer);
  if (!row.is_array() || row.size() != static_cast<std::size_t>(physical))
    fail(file, row_key, fmt::format("expected a row of {} logical expert ids, as row 0", physical));
  std::vector<int> last_slot(experts, -1);  // per logical expert, its latest physical slot in the row
  for (int p = 0; p < physical; ++p) {
    const std::string key = fmt::format("{}[{}]", row_key, p);
    const long long expert = json_integer(row[p], file + ": " + key, "a logical expert id");
    if (expert < 0 || expert >= experts)
      fail(file, key,
           fmt::format("logical expert {} out of range [0, {}) of {}", expert, experts, model.name));
    if (slots == nullptr) continue;  // SGLang keeps a dense layer's row but places no experts by it
    const int gpu = p / slots_per_gpu;
    const int earlier = last_slot[expert];
    if (earlier >= 0 && earlier / slots_per_gpu == gpu)
      fail(file, key,
           fmt::format("GPU {} holds logical expert {} in two slots (physical experts {} and {}); semsim's "
                       "placements hold an expert at most once per device",
                       gpu, expert, earlier, p));
    last_slot[expert] = p;
    (*slots)[gpu].push_back(static_cast<int>(expert));
  }
  if (slots == nullptr) return;
  const auto unplaced = std::find(last_slot.begin(), last_slot.end(), -1);
  if (unplaced != last_slot.end())
    fail(file, row_key,
         fmt::format("logical expert {} has no physical slot (decoder layer {} is MoE layer {} of {})",
                     unplaced - last_slot.begin(), layer, moe, model.name));
}

}  // namespace

Placement placement_from_sglang(std::string_view json_text, const std::string& file, const MoeModel& model,
                                int gpus, int devices_per_node) {
  if (gpus < 1 || devices_per_node < 1 || gpus % devices_per_node != 0)
    throw InputError(fmt::format("{} GPUs do not form nodes of {}", gpus, devices_per_node));
  const nlohmann::json document = parse_json_file(json_text, file);
  const nlohmann::json& rows = sglang_rows(document, file, model);
  const int physical = physical_experts(rows, file, model, gpus);

  Placement placement;
  placement.moe_layers = model.moe_layers();
  placement.experts = model.routed_experts;
  placement.devices = gpus;
  placement.devices_per_node = devices_per_node;
  placement.slots.assign(placement.moe_layers, std::vector<std::vector<int>>(gpus));
  const SglangRows shape{file, model, physical, physical / gpus};
  for (int layer = 0, moe = 0; layer < model.layers; ++layer) {
    const bool is_moe = model.is_moe_layer(layer);
    read_sglang_row(rows[layer], layer, moe, shape, is_moe ? &placement.slots[moe] : nullptr);
    moe += is_moe ? 1 : 0;
  }
  placement.seal();
  return placement;
}

}  // namespace semsim
