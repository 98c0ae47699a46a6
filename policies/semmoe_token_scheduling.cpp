#include "policies/semmoe_token_scheduling.hpp"

#include <algorithm>
#include <bit>
#include <functional>

namespace semsim {

void align_to_equal_slices(std::span<const int> predicted, std::span<const float> confidence, int ranks,
                           std::span<int> rank, std::vector<int>& scratch, std::vector<std::uint64_t>& keys) {
  const auto tokens = static_cast<int>(predicted.size());
  // scratch = [ranks + 1 bucket offsets | ranks room counters | tokens bucketed by predicted rank]
  scratch.assign(static_cast<std::size_t>(2 * ranks + 1 + tokens), 0);
  int* offset = scratch.data();
  int* room = offset + ranks + 1;
  int* bucketed = room + ranks;
  for (int t = 0; t < tokens; ++t)
    if (predicted[t] >= 0) ++offset[predicted[t] + 1];
  for (int r = 0; r < ranks; ++r) offset[r + 1] += offset[r];
  for (int r = 0; r < ranks; ++r) room[r] = (tokens + ranks - 1) / ranks;
  for (int t = 0; t < tokens; ++t) {
    rank[t] = -1;
    if (predicted[t] >= 0) bucketed[offset[predicted[t]]++] = t;  // offsets now mark bucket ends
  }
  for (int r = 0; r < ranks; ++r) {
    int* first = bucketed + (r == 0 ? 0 : offset[r - 1]);
    int* last = bucketed + offset[r];
    const auto keep = static_cast<int>(std::min<std::ptrdiff_t>(last - first, room[r]));
    if (first + keep < last) {
      // Select on one integer per token: confidence bits (non-negative floats order like their bit
      // patterns), then the earlier token first.
      keys.clear();
      for (const int* t = first; t < last; ++t)
        keys.push_back(static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(confidence[*t])) << 32 |
                       (0xffffffffu - static_cast<std::uint32_t>(*t)));
      std::nth_element(keys.begin(), keys.begin() + keep, keys.end(), std::greater<>());
      for (int i = 0; i < keep; ++i) rank[0xffffffffu - static_cast<std::uint32_t>(keys[i])] = r;
    } else {
      for (int i = 0; i < keep; ++i) rank[first[i]] = r;
    }
    room[r] -= keep;
  }
  int open = 0;
  for (int t = 0; t < tokens; ++t) {
    if (rank[t] >= 0) continue;
    while (room[open] == 0) ++open;
    rank[t] = open;
    --room[open];
  }
}

void reshuffle_tokens(const PlacementPlan& plan, int layer, std::span<const std::int32_t> token_ids,
                      std::span<const int> previous_devices, int history, int ranks, TokenReshuffle& out) {
  const std::size_t tokens = token_ids.size();
  out.predicted.resize(tokens);
  out.confidence.resize(tokens);
  out.basis.resize(tokens);
  out.rank.resize(tokens);
  // Token ids are random accesses into vocabulary-sized tables: fetch a few tokens ahead.
  constexpr std::size_t kAhead = 8;
  const bool tables = !plan.token_devices.empty();
  const auto vocabulary = tables ? plan.token_devices.device[layer].size() : 0;
  for (std::size_t i = 0; i < tokens; ++i) {
    if (tables && i + kAhead < tokens) {
      const auto ahead = static_cast<std::size_t>(static_cast<std::uint32_t>(token_ids[i + kAhead]));
      if (ahead < vocabulary) {
        __builtin_prefetch(&plan.token_devices.device[layer][ahead]);
        __builtin_prefetch(&plan.token_devices.confidence[layer][ahead]);
      }
    }
    const TokenDevicePrediction p = predict_token_device(
        plan, layer, token_ids[i], previous_devices.subspan(i * static_cast<std::size_t>(history), history));
    out.predicted[i] = p.device;
    out.confidence[i] = static_cast<float>(p.confidence);
    out.basis[i] = p.basis;
  }
  align_to_equal_slices(out.predicted, out.confidence, ranks, out.rank, out.scratch, out.keys);
}

}  // namespace semsim
