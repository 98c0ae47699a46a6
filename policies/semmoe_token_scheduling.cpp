#include "policies/semmoe_token_scheduling.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace semsim {
namespace {

struct KthLargest {
  std::uint32_t value;  // the k-th largest key
  int equal_within;     // how many keys equal to it the k largest hold
};

// Radix select, most significant byte first; each pass keeps only the keys sharing the k-th
// largest's digits, so the work is a few branch-free sweeps (nth_element mispredicts on random
// keys). 1 <= k <= keys.size(); `keys` is overwritten.
KthLargest kth_largest(std::vector<std::uint32_t>& keys, int k) {
  std::size_t candidates = keys.size();
  std::uint32_t value = 0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    std::array<int, 256> count{};
    for (std::size_t i = 0; i < candidates; ++i) ++count[(keys[i] >> shift) & 0xffu];
    std::uint32_t digit = 255;
    while (k > count[digit]) k -= count[digit--];
    std::size_t kept = 0;
    for (std::size_t i = 0; i < candidates; ++i) {
      const std::uint32_t key = keys[i];
      keys[kept] = key;
      kept += ((key >> shift) & 0xffu) == digit ? 1 : 0;
    }
    candidates = kept;
    value |= digit << shift;
  }
  return {value, k};
}

}  // namespace

void align_to_equal_slices(std::span<const int> predicted, std::span<const float> confidence, int ranks,
                           std::span<int> rank, std::vector<int>& scratch, std::vector<std::uint32_t>& keys) {
  const auto tokens = static_cast<int>(predicted.size());
  const int slice = (tokens + ranks - 1) / ranks;
  // Per rank, with the slot of "no prediction" first: [ranks + 1 counts | ranks + 1 bucket cursors |
  // ranks + 1 cursor steps], then the tokens of the overflowing ranks bucketed in token order.
  const int slots = ranks + 1;
  scratch.assign(static_cast<std::size_t>(3 * slots), 0);
  int* wanted = scratch.data() + 1;
  for (int t = 0; t < tokens; ++t) {
    rank[t] = predicted[t];
    ++wanted[predicted[t]];
  }
  // Ranks within their slice keep every token predicted for them as is; only the others select.
  int overflowing = 0;
  for (int r = 0; r < ranks; ++r) overflowing += wanted[r] > slice ? wanted[r] : 0;
  if (overflowing > 0) {
    // One more slot at the end takes, without advancing, the tokens of the other ranks: bucketing
    // is then free of branches on the (unpredictable) rank of each token.
    scratch.resize(scratch.size() + static_cast<std::size_t>(overflowing) + 1);
    wanted = scratch.data() + 1;
    int* cursor = scratch.data() + slots + 1;
    int* step = cursor + slots;
    int* bucketed = scratch.data() + 3 * slots;
    cursor[-1] = overflowing;
    for (int r = 0, at = 0; r < ranks; ++r) {
      const bool overflows = wanted[r] > slice;
      cursor[r] = overflows ? at : overflowing;
      step[r] = overflows ? 1 : 0;
      at += overflows ? wanted[r] : 0;
    }
    for (int t = 0; t < tokens; ++t) {
      bucketed[cursor[predicted[t]]] = t;
      cursor[predicted[t]] += step[predicted[t]];
    }
    for (int r = 0; r < ranks; ++r) {
      if (step[r] == 0) continue;
      const int* first = bucketed + cursor[r] - wanted[r];
      // Non-negative floats order like their bit patterns: find the slice-th highest confidence,
      // then keep those above it and, of those equal to it, the earliest (the bucket is in token
      // order) until the slice is full.
      keys.resize(static_cast<std::size_t>(wanted[r]));
      for (int i = 0; i < wanted[r]; ++i) keys[i] = std::bit_cast<std::uint32_t>(confidence[first[i]]);
      const KthLargest cut = kth_largest(keys, slice);
      for (int i = 0, equal_left = cut.equal_within; i < wanted[r]; ++i) {
        const std::uint32_t key = std::bit_cast<std::uint32_t>(confidence[first[i]]);
        const bool equal = key == cut.value;
        rank[first[i]] = (key > cut.value) | (equal & (equal_left > 0)) ? r : -1;
        equal_left -= equal ? 1 : 0;
      }
    }
  }
  int* room = scratch.data() + slots + 1;  // the cursors are spent
  for (int r = 0; r < ranks; ++r) room[r] = slice - std::min(wanted[r], slice);
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
  const auto history_length = static_cast<std::size_t>(history);
  const LayerDevicePredictor predictor(plan, layer, history_length);
  // Far enough ahead to cover a memory access at a few nanoseconds per token.
  constexpr std::size_t kAhead = 16;
  for (std::size_t i = 0; i < std::min(kAhead, tokens); ++i) predictor.prefetch(token_ids[i]);
  int* predicted = out.predicted.data();
  float* confidence = out.confidence.data();
  DeviceBasis* basis = out.basis.data();
  for (std::size_t i = 0; i < tokens; ++i) {
    if (i + kAhead < tokens) predictor.prefetch(token_ids[i + kAhead]);
    const TokenDevicePrediction p =
        predictor.predict(token_ids[i], previous_devices.subspan(i * history_length, history_length));
    predicted[i] = p.device;
    confidence[i] = static_cast<float>(p.confidence);
    basis[i] = p.basis;
  }
  align_to_equal_slices(out.predicted, out.confidence, ranks, out.rank, out.scratch, out.keys);
}

}  // namespace semsim
