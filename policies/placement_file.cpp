#include "policies/placement_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {
namespace {

constexpr const char* kFormatName = "semsim-placement";
constexpr int kMaxLookback = 4;  // InterLayerTable keys hold four 16-bit devices

void check_word(const std::string& word, const char* what) {
  const bool bad = word.empty() || word[0] == '#' || std::any_of(word.begin(), word.end(), [](char c) {
                     return c == ' ' || c == '\t' || c == '\n';
                   });
  if (bad) throw std::logic_error(fmt::format("placement file: {} '{}' is not a single word", what, word));
}

std::string table_text(const PlacementPlan& plan) {
  const Placement& p = plan.placement;
  std::string out;
  auto line = std::back_inserter(out);
  check_word(plan.policy.name, "policy name");
  fmt::format_to(line, "# semsim placement file (policies/PLACEMENT_FORMAT.md)\nformat {} {}\npolicy {}\n",
                 kFormatName, kPlacementFormatVersion, plan.policy.name);
  for (const auto& [key, value] : plan.policy.params) {
    check_word(key, "parameter");
    fmt::format_to(line, "param {} {}\n", key, value);
  }
  fmt::format_to(line, "moe_layers {}\nexperts {}\ndevices {}\ndevices_per_node {}\n", p.moe_layers,
                 p.experts, p.devices, p.devices_per_node);
  if (const auto& s = plan.profiled_on)
    fmt::format_to(line, "profiled_on {} {} {} {} {} {}\n", s->trace_hash, s->split, s->seed, s->requests,
                   s->profiled, escape_token_text(s->trace));
  for (const auto& [key, value] : plan.solver) {
    check_word(key, "solver key");
    fmt::format_to(line, "solver {} {}\n", key, value);
  }
  fmt::format_to(line, "solver_seconds {}\nslots\n", plan.solver_seconds);
  for (int layer = 0; layer < p.moe_layers; ++layer)
    for (int device = 0; device < p.devices; ++device)
      fmt::format_to(line, "{} {}{}{}\n", layer, device, p.slots[layer][device].empty() ? "" : " ",
                     fmt::join(p.slots[layer][device], " "));
  return out;
}

void write_tables(const PlacementPlan& plan, TextWriter& writer) {
  const TokenDeviceTable& t = plan.token_devices;
  if (!t.empty()) {
    fmt::format_to(std::back_inserter(writer.buffer()), "token_devices {}\n", t.device[0].size());
    for (std::size_t token = 0; token < t.texts.size(); ++token)
      if (!t.texts[token].empty())
        fmt::format_to(std::back_inserter(writer.buffer()), "text {} {}\n", token,
                       escape_token_text(t.texts[token]));
    for (std::size_t layer = 0; layer < t.device.size(); ++layer) {
      for (std::size_t token = 0; token < t.device[layer].size(); ++token)
        if (t.device[layer][token] >= 0)
          fmt::format_to(std::back_inserter(writer.buffer()), "{} {} {} {}\n", layer, token,
                         t.device[layer][token], t.confidence[layer][token]);
      writer.flush_if_large();
    }
  }
  const InterLayerTable& a = plan.inter_layer;
  if (!a.empty()) {
    fmt::format_to(std::back_inserter(writer.buffer()), "inter_layer {}\n", a.lookback);
    for (std::size_t layer = 0; layer < a.next.size(); ++layer) {
      // In key order (shorter histories first): the same table always gives the same file.
      for (std::size_t key = 0; key < a.next[layer].size(); ++key) {
        const InterLayerTable::Entry& entry = a.next[layer][key];
        if (entry.device < 0) continue;
        fmt::format_to(std::back_inserter(writer.buffer()), "{} {} -> {} {}\n", layer,
                       fmt::join(a.key_devices(key), " "), entry.device, entry.confidence);
      }
      writer.flush_if_large();
    }
  }
  writer.buffer() += "end\n";
}

// Line-by-line reading of the fields of each line that has any (blank and '#' lines skipped),
// with errors naming the file and line.
class FieldReader {
 public:
  explicit FieldReader(const std::string& path) : lines_(path) {}

  bool next() {
    std::string_view line;
    while (lines_.next(line)) {
      fields_.clear();
      for (std::size_t at = line.find_first_not_of(" \t"); at != std::string_view::npos;
           at = line.find_first_not_of(" \t", at)) {
        const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
        fields_.push_back(line.substr(at, end - at));
        at = end;
      }
      if (!fields_.empty() && !fields_[0].starts_with('#')) return true;
    }
    fields_.clear();
    return false;
  }
  void expect_next(std::string_view what) {
    if (next()) return;
    // A file without a line of content has no line to name.
    if (lines_.line_number() == 0) throw InputError(lines_.path() + ": empty file, not a placement file");
    fail(fmt::format("the file ends early (truncated?): expected {}", what));
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(fmt::format("{}:{}: {}", lines_.path(), lines_.line_number(), message));
  }

  std::size_t size() const { return fields_.size(); }
  std::string_view field(std::size_t i) const { return fields_[i]; }
  bool is(std::string_view key) const { return fields_[0] == key; }
  bool starts_with_number() const {
    const char first = fields_[0][0];
    return (first >= '0' && first <= '9') || first == '-';
  }

  // The current line must be `key` followed by `values` fields.
  void expect_key(std::string_view key, std::size_t values) const {
    if (!is(key)) fail(fmt::format("expected '{}', found '{}'", key, field(0)));
    if (size() != values + 1) fail(fmt::format("'{}' takes {} value{}", key, values, values == 1 ? "" : "s"));
  }
  void expect_fields(std::size_t count, std::string_view what) const {
    if (size() != count) fail(fmt::format("expected {} fields ({}), found {}", count, what, size()));
  }

  long long integer(std::size_t i, std::string_view what, long long min, long long max) const {
    long long value = 0;
    const std::string_view text = field(i);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
      fail(fmt::format("{} '{}' is not a whole number", what, text));
    if (value < min || value > max) fail(fmt::format("{} {} out of range [{}, {}]", what, value, min, max));
    return value;
  }
  template <typename Float>
  Float number(std::size_t i, std::string_view what) const {
    Float value = 0;
    const std::string_view text = field(i);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
      fail(fmt::format("{} '{}' is not a number", what, text));
    return value;
  }
  float confidence(std::size_t i) const {
    const auto value = number<float>(i, "confidence");
    if (!(value >= 0 && value <= 1)) fail(fmt::format("confidence {} outside [0, 1]", field(i)));
    return value;
  }

 private:
  LineReader lines_;
  std::vector<std::string_view> fields_;
};

void read_header(FieldReader& in, PlacementPlan& plan, int& plan_version) {
  Placement& p = plan.placement;
  in.expect_next("the format line");
  if (!in.is("format") || in.size() != 3 || in.field(1) != kFormatName)
    in.fail(fmt::format("not a placement file: expected 'format {} {}' first", kFormatName,
                        kPlacementFormatVersion));
  const long long version = in.integer(2, "format version", 0, 1 << 30);
  if (version < 1 || version > kPlacementFormatVersion)
    in.fail(fmt::format("unsupported placement format version {} (this semsim reads 1 to {})", version,
                        kPlacementFormatVersion));
  plan_version = static_cast<int>(version);
  in.expect_next("'policy'");
  in.expect_key("policy", 1);
  plan.policy.name = std::string(in.field(1));
  in.expect_next("'moe_layers'");
  for (; in.is("param"); in.expect_next("'moe_layers'")) {
    in.expect_key("param", 2);
    const auto [it, added] =
        plan.policy.params.emplace(std::string(in.field(1)), in.number<double>(2, "parameter value"));
    if (!added) in.fail(fmt::format("parameter '{}' given twice", it->first));
  }
  auto header_integer = [&](std::string_view key, long long min, long long max, std::string_view then) {
    in.expect_key(key, 1);
    const auto value = static_cast<int>(in.integer(1, key, min, max));
    in.expect_next(then);
    return value;
  };
  p.moe_layers = header_integer("moe_layers", 1, 1 << 16, "'experts'");
  p.experts = header_integer("experts", 1, 1 << 16, "'devices'");
  p.devices = header_integer("devices", 1, 1 << 15, "'devices_per_node'");
  in.expect_key("devices_per_node", 1);
  p.devices_per_node = static_cast<int>(in.integer(1, "devices_per_node", 1, p.devices));
  if (p.devices % p.devices_per_node != 0)
    in.fail(fmt::format("devices_per_node {} does not divide the {} devices", p.devices_per_node, p.devices));
  in.expect_next("'solver_seconds'");
  if (in.is("profiled_on")) {
    in.expect_key("profiled_on", 6);
    ProfileSource s;
    s.trace_hash = std::string(in.field(1));
    s.split = in.number<double>(2, "split");
    if (!(s.split >= 0 && s.split < 1)) in.fail(fmt::format("split {} outside [0, 1)", in.field(2)));
    s.seed = static_cast<std::uint64_t>(in.integer(3, "seed", 0, std::numeric_limits<long long>::max()));
    s.requests = in.integer(4, "requests", 0, std::numeric_limits<int>::max());
    s.profiled = in.integer(5, "profiled requests", 0, s.requests);
    try {
      s.trace = unescape_token_text(in.field(6), "trace");
    } catch (const InputError&) {
      in.fail("bad %-escape in the trace name");
    }
    plan.profiled_on = std::move(s);
    in.expect_next("'solver_seconds'");
  }
  for (; in.is("solver"); in.expect_next("'solver_seconds'")) {
    in.expect_key("solver", 2);
    const auto [it, added] =
        plan.solver.emplace(std::string(in.field(1)), in.number<double>(2, "solver value"));
    if (!added) in.fail(fmt::format("solver value '{}' given twice", it->first));
  }
  in.expect_key("solver_seconds", 1);
  plan.solver_seconds = in.number<double>(1, "solver_seconds");
  if (!(plan.solver_seconds >= 0)) in.fail("solver_seconds must be >= 0");
  in.expect_next("'slots'");
  in.expect_key("slots", 0);
}

void read_slots(FieldReader& in, Placement& p) {
  p.slots.assign(p.moe_layers, std::vector<std::vector<int>>(p.devices));
  std::vector<char> hosted(p.experts);
  std::vector<long long> on_device(p.experts, -1);  // last device listing each expert (duplicates)
  for (int layer = 0; layer < p.moe_layers; ++layer) {
    std::fill(hosted.begin(), hosted.end(), 0);
    for (int device = 0; device < p.devices; ++device) {
      const std::string expected = fmt::format("the slots of layer {} device {}", layer, device);
      in.expect_next(expected);
      if (!in.starts_with_number() || in.size() < 2) in.fail(fmt::format("missing {}", expected));
      const long long line_layer = in.integer(0, "layer", 0, p.moe_layers - 1);
      const long long line_device = in.integer(1, "device", 0, p.devices - 1);
      if (line_layer != layer || line_device != device) {
        if (line_layer > layer || (line_layer == layer && line_device > device))
          in.fail(fmt::format("missing {}", expected));
        in.fail(fmt::format("the slots of layer {} device {} are listed twice", line_layer, line_device));
      }
      for (std::size_t i = 2; i < in.size(); ++i) {
        const auto expert = static_cast<int>(in.integer(i, "expert", 0, p.experts - 1));
        const long long slot_line = static_cast<long long>(layer) * p.devices + device;
        if (on_device[expert] == slot_line)
          in.fail(fmt::format("expert {} listed twice on device {} of layer {}", expert, device, layer));
        on_device[expert] = slot_line;
        hosted[expert] = 1;
        p.slots[layer][device].push_back(expert);
      }
    }
    const auto nowhere = std::find(hosted.begin(), hosted.end(), 0);
    if (nowhere != hosted.end())
      in.fail(fmt::format("expert {} of layer {} is hosted on no device", nowhere - hosted.begin(), layer));
  }
}

// Version 1 tables have no texts: their ids are the profiled trace's (TokenDeviceTable::texts).
void read_token_devices(FieldReader& in, const Placement& p, int version, TokenDeviceTable& t) {
  in.expect_key("token_devices", 1);
  const auto vocabulary = static_cast<std::size_t>(in.integer(1, "vocabulary", 1, 1 << 24));
  t.device.assign(p.moe_layers, std::vector<std::int16_t>(vocabulary, -1));
  t.confidence.assign(p.moe_layers, std::vector<float>(vocabulary, 0.0f));
  in.expect_next("'end'");
  if (version >= 2) {
    t.texts.assign(vocabulary, "");
    for (long long previous = -1; in.is("text"); in.expect_next("'end'")) {
      in.expect_fields(3, "text token text");
      const auto token = in.integer(1, "token", previous + 1, static_cast<long long>(vocabulary) - 1);
      try {
        t.texts[static_cast<std::size_t>(token)] = unescape_token_text(in.field(2), "text");
      } catch (const InputError&) {
        in.fail(fmt::format("token {}: bad %-escape in its text", token));
      }
      previous = token;
    }
  }
  for (; in.starts_with_number(); in.expect_next("'end'")) {
    in.expect_fields(4, "layer token device confidence");
    const auto layer = in.integer(0, "layer", 0, p.moe_layers - 1);
    const auto token = in.integer(1, "token", 0, static_cast<long long>(vocabulary) - 1);
    const auto device = in.integer(2, "device", 0, p.devices - 1);
    std::int16_t& entry = t.device[layer][token];
    if (entry >= 0) in.fail(fmt::format("token {} of layer {} listed twice", token, layer));
    entry = static_cast<std::int16_t>(device);
    t.confidence[layer][token] = in.confidence(3);
  }
}

void read_inter_layer(FieldReader& in, const Placement& p, InterLayerTable& a) {
  in.expect_key("inter_layer", 1);
  const auto lookback = static_cast<int>(in.integer(1, "lookback", 1, kMaxLookback));
  try {
    a.reset(p.moe_layers, p.devices, lookback);
  } catch (const InputError& e) {
    in.fail(e.what());
  }
  std::vector<int> previous;
  for (in.expect_next("'end'"); in.starts_with_number(); in.expect_next("'end'")) {
    const auto layer = static_cast<int>(in.integer(0, "layer", 1, p.moe_layers - 1));
    const std::size_t arrow = in.size() >= 3 ? in.size() - 3 : 0;
    const auto history = static_cast<int>(arrow) - 1;
    if (arrow < 2 || in.field(arrow) != "->" || history > std::min(a.lookback, layer))
      in.fail(
          fmt::format("expected 'layer previous-devices -> device confidence' with 1 to {} previous devices",
                      std::min(a.lookback, layer)));
    previous.clear();
    for (std::size_t i = 1; i < arrow; ++i)
      previous.push_back(static_cast<int>(in.integer(i, "previous device", 0, p.devices - 1)));
    const InterLayerTable::Entry entry{
        static_cast<std::int16_t>(in.integer(arrow + 1, "device", 0, p.devices - 1)),
        in.confidence(arrow + 2)};
    InterLayerTable::Entry& slot = a.next[layer][a.key_index(previous)];
    if (slot.device >= 0)
      in.fail(fmt::format("layer {}: previous devices {} listed twice", layer, fmt::join(previous, " ")));
    slot = entry;
  }
}

}  // namespace

void write_placement_file(const PlacementPlan& plan, const std::string& path) {
  TextWriter writer(path);
  writer.buffer() = table_text(plan);
  write_tables(plan, writer);
  writer.close();
}

PlacementPlan read_placement_file(const std::string& path) {
  FieldReader in(path);
  PlacementPlan plan;
  int version = 0;
  read_header(in, plan, version);
  read_slots(in, plan.placement);
  in.expect_next("'token_devices', 'inter_layer' or 'end'");
  if (in.is("token_devices")) read_token_devices(in, plan.placement, version, plan.token_devices);
  if (in.is("inter_layer")) read_inter_layer(in, plan.placement, plan.inter_layer);
  if (!in.is("end"))
    in.fail(fmt::format(
        "expected 'end', found '{}' (sections come in the order slots, token_devices, inter_layer)",
        in.field(0)));
  in.expect_key("end", 0);
  if (in.next()) in.fail("unexpected content after 'end'");
  plan.placement.seal();
  return plan;
}

}  // namespace semsim
