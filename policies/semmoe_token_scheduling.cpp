#include "policies/semmoe_token_scheduling.hpp"

#include <algorithm>

namespace semsim {

void align_to_equal_slices(std::span<const int> predicted, std::span<const float> confidence, int ranks,
                           std::span<int> rank, std::vector<int>& scratch) {
  const auto tokens = static_cast<int>(predicted.size());
  // scratch = [ranks + 1 bucket offsets | ranks room counters | tokens bucketed by predicted rank]
  scratch.assign(static_cast<std::size_t>(2 * ranks + 1 + tokens), 0);
  int* offset = scratch.data();
  int* room = offset + ranks + 1;
  int* bucketed = room + ranks;
  for (int t = 0; t < tokens; ++t)
    if (predicted[t] >= 0) ++offset[predicted[t] + 1];
  for (int r = 0; r < ranks; ++r) offset[r + 1] += offset[r];
  for (int r = 0; r < ranks; ++r) room[r] = tokens / ranks + (r < tokens % ranks ? 1 : 0);
  for (int t = 0; t < tokens; ++t) {
    rank[t] = -1;
    if (predicted[t] >= 0) bucketed[offset[predicted[t]]++] = t;  // offsets now mark bucket ends
  }
  for (int r = 0; r < ranks; ++r) {
    int* first = bucketed + (r == 0 ? 0 : offset[r - 1]);
    int* last = bucketed + offset[r];
    const auto keep = static_cast<int>(std::min<std::ptrdiff_t>(last - first, room[r]));
    if (first + keep < last)
      std::nth_element(first, first + keep, last, [&](int a, int b) {
        return confidence[a] != confidence[b] ? confidence[a] > confidence[b] : a < b;
      });
    for (int i = 0; i < keep; ++i) rank[first[i]] = r;
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
  for (std::size_t i = 0; i < tokens; ++i) {
    const TokenDevicePrediction p = predict_token_device(
        plan, layer, token_ids[i], previous_devices.subspan(i * static_cast<std::size_t>(history), history));
    out.predicted[i] = p.device;
    out.confidence[i] = static_cast<float>(p.confidence);
    out.basis[i] = p.basis;
  }
  align_to_equal_slices(out.predicted, out.confidence, ranks, out.rank, out.scratch);
}

}  // namespace semsim
