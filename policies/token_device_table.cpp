#include "policies/token_device_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>

#include "models/input_error.hpp"

namespace semsim {

double token_confidence(const Placement& placement, const RoutingProfile& profile, int layer,
                        std::int32_t token, int device) {
  long long total = 0, hosted = 0;
  for (const ExpertCount& c : profile.token_experts(layer, token)) {
    total += c.count;
    hosted += placement.hosts(layer, c.expert, device) ? c.count : 0;
  }
  return total > 0 ? static_cast<double>(hosted) / static_cast<double>(total) : 0.0;
}

void complete_token_devices(TokenDeviceTable& table, const Placement& placement,
                            const RoutingProfile& profile, double balance) {
  const auto vocabulary = static_cast<std::int32_t>(profile.vocabulary());
  if (table.empty()) {
    table.device.assign(placement.moe_layers, std::vector<std::int16_t>(vocabulary, -1));
    table.confidence.assign(placement.moe_layers, std::vector<float>(vocabulary, 0.0F));
  }
  std::vector<std::int32_t> order;
  long long occurrences = 0;
  for (std::int32_t token = 0; token < vocabulary; ++token)
    if (profile.token_occurrences(token) > 0)
      order.push_back(token), occurrences += profile.token_occurrences(token);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return profile.token_occurrences(a) > profile.token_occurrences(b);
  });
  const int devices = placement.devices;
  const double cap = balance * static_cast<double>(occurrences) / devices;

  std::vector<long long> hosted(devices), load(devices);
  for (int layer = 0; layer < placement.moe_layers; ++layer) {
    auto& device = table.device[layer];
    std::fill(load.begin(), load.end(), 0);
    for (std::int32_t token : order)
      if (device[token] >= 0) load[device[token]] += profile.token_occurrences(token);
    for (std::int32_t token : order) {
      if (device[token] >= 0) continue;
      std::fill(hosted.begin(), hosted.end(), 0);
      long long total = 0;
      for (const ExpertCount& c : profile.token_experts(layer, token)) {
        total += c.count;
        for (int d = 0; d < devices; ++d) hosted[d] += placement.hosts(layer, c.expert, d) ? c.count : 0;
      }
      const long long size = profile.token_occurrences(token);
      int best = -1;
      for (int d = 0; d < devices; ++d) {
        if (static_cast<double>(load[d] + size) > cap) continue;
        if (best < 0 || hosted[d] > hosted[best] || (hosted[d] == hosted[best] && load[d] < load[best]))
          best = d;
      }
      if (best < 0) best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      load[best] += size;
      device[token] = static_cast<std::int16_t>(best);
      table.confidence[layer][token] =
          total > 0 ? static_cast<float>(static_cast<double>(hosted[best]) / static_cast<double>(total))
                    : 0.0F;
    }
  }
}

std::vector<std::int16_t> dp_vote_devices(const TokenDeviceTable& table, int devices) {
  if (table.empty()) return {};
  const std::size_t vocabulary = table.device.front().size();
  std::vector<std::int16_t> vote(vocabulary, -1);
  std::vector<int> layers_naming(devices);
  for (std::size_t token = 0; token < vocabulary; ++token) {
    std::fill(layers_naming.begin(), layers_naming.end(), 0);
    for (const auto& layer : table.device)
      if (layer[token] >= 0) ++layers_naming[layer[token]];
    const auto best = std::max_element(layers_naming.begin(), layers_naming.end());
    if (*best > 0) vote[token] = static_cast<std::int16_t>(best - layers_naming.begin());
  }
  return vote;
}

int count_prompt_votes(const std::vector<std::int16_t>& vote_device, std::span<const std::int32_t> prompt,
                       std::span<int> votes) {
  std::fill(votes.begin(), votes.end(), 0);
  const auto vocabulary = static_cast<std::uint32_t>(vote_device.size());
  int voted = 0;
  for (std::int32_t token : prompt) {
    // Unsigned compare: -1 (unknown identity) is out of range too.
    if (static_cast<std::uint32_t>(token) >= vocabulary) continue;
    const int device = vote_device[static_cast<std::uint32_t>(token)];
    if (device < 0) continue;
    ++votes[device];
    ++voted;
  }
  return voted;
}

void fill_unprofiled_by_text(TokenDeviceTable& table, const RoutingProfile& profile) {
  for (std::size_t layer = 0; layer < table.device.size(); ++layer) {
    auto& device = table.device[layer];
    auto& confidence = table.confidence[layer];
    for (std::size_t token = 0; token < device.size(); ++token) {
      const auto same = profile.same_text_tokens(static_cast<std::int32_t>(token));
      if (device[token] >= 0 || same.empty()) continue;
      std::vector<long long> votes;
      double weighted_confidence = 0;
      long long weight = 0;
      for (std::int32_t other : same) {
        if (device[other] < 0) continue;
        const long long n = profile.token_occurrences(other);
        if (static_cast<std::size_t>(device[other]) >= votes.size()) votes.resize(device[other] + 1, 0);
        votes[device[other]] += n;
        weighted_confidence += static_cast<double>(n) * confidence[other];
        weight += n;
      }
      if (weight == 0) continue;
      device[token] = static_cast<std::int16_t>(std::max_element(votes.begin(), votes.end()) - votes.begin());
      confidence[token] = static_cast<float>(weighted_confidence / static_cast<double>(weight));
    }
  }
}

TokenDeviceTable token_table_for(const TokenDeviceTable& table, const std::vector<std::string>& vocabulary,
                                 TokenTableMatch& match) {
  match = {static_cast<long long>(vocabulary.size())};
  const std::size_t table_size = table.empty() ? 0 : table.device.front().size();
  if (table.empty() || table.texts == vocabulary) {
    match.by_text = match.vocabulary;
    match.same_vocabulary = true;
    return table;
  }
  if (table.texts.empty()) {  // a version-1 file: ids of the profiled trace
    if (vocabulary.size() > table_size)
      throw InputError(fmt::format(
          "the trace's vocabulary ({} tokens) is larger than the placement's token table ({}), and the "
          "table has no token texts to match them by (a version-1 placement file: made again with "
          "`semsim place`, it applies to any trace of the model)",
          vocabulary.size(), table_size));
    match.by_text = match.vocabulary;
    return table;
  }
  std::unordered_map<std::string_view, std::int32_t> by_text;
  std::unordered_map<std::string, std::vector<std::int32_t>> by_normalized_text;
  for (std::size_t token = table.texts.size(); token-- > 0;) {  // lower ids win
    const std::string& text = table.texts[token];
    if (text.empty()) continue;
    by_text[text] = static_cast<std::int32_t>(token);
    by_normalized_text[normalized_token_text(text)].push_back(static_cast<std::int32_t>(token));
  }
  for (auto& [text, tokens] : by_normalized_text) std::reverse(tokens.begin(), tokens.end());

  const std::size_t layers = table.device.size();
  TokenDeviceTable out;
  out.texts = vocabulary;
  out.device.assign(layers, std::vector<std::int16_t>(vocabulary.size(), -1));
  out.confidence.assign(layers, std::vector<float>(vocabulary.size(), 0.0f));
  auto copy_entries = [&](std::size_t to, std::size_t from) {
    for (std::size_t layer = 0; layer < layers; ++layer) {
      out.device[layer][to] = table.device[layer][from];
      out.confidence[layer][to] = table.confidence[layer][from];
    }
  };
  for (std::size_t token = 0; token < vocabulary.size(); ++token) {
    const std::string& text = vocabulary[token];
    if (text.empty()) {
      if (token < table_size && table.texts[token].empty()) copy_entries(token, token), ++match.by_text;
      continue;
    }
    if (const auto it = by_text.find(text); it != by_text.end()) {
      copy_entries(token, static_cast<std::size_t>(it->second));
      ++match.by_text;
      continue;
    }
    const auto same = by_normalized_text.find(normalized_token_text(text));
    if (same == by_normalized_text.end()) continue;
    bool found = false;
    for (std::size_t layer = 0; layer < layers; ++layer)
      for (std::int32_t other : same->second) {
        const auto device = table.device[layer][static_cast<std::size_t>(other)];
        const float confidence = table.confidence[layer][static_cast<std::size_t>(other)];
        if (device < 0 || (out.device[layer][token] >= 0 && confidence <= out.confidence[layer][token]))
          continue;
        out.device[layer][token] = device;
        out.confidence[layer][token] = confidence;
        found = true;
      }
    match.by_normalized_text += found;
  }
  return out;
}

}  // namespace semsim
