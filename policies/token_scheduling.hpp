#pragma once
// Attention-TP token scheduling: which rank's slice of each MoE layer every token of a step joins.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/placement_plan.hpp"
#include "policies/semmoe_token_scheduling.hpp"

namespace semsim {

class TokenScheduler {
 public:
  virtual ~TokenScheduler() = default;
  // Whether ranks follow the tokens' ids and observed routing rather than their positions: the
  // caller then tracks each token's majority device per layer, and the step permutes the tokens'
  // hidden states to their ranks and back. Otherwise the ranks are the same at every layer of a step.
  virtual bool reshuffles() const = 0;
  // How many previous MoE layers' majority devices assign() reads per token at MoE layer `layer`.
  virtual int history(int layer) const = 0;
  // Sets `rank` to each token's rank at MoE layer `layer`, for the step's tokens `token_ids`
  // (vocabulary ids, -1 unknown); `previous_devices[token * history(layer) + b]` is the token's
  // majority device at layer-1-b.
  virtual void assign(int layer, std::span<const std::int32_t> token_ids,
                      std::span<const int> previous_devices, std::vector<int>& rank) = 0;
};

// Vanilla: equal contiguous slices by position (the first ceil(T/R) tokens on rank 0, ...) of the
// T = rank.size() tokens.
void positional_token_ranks(int ranks, std::span<int> rank);

class PositionalTokenScheduler final : public TokenScheduler {
 public:
  explicit PositionalTokenScheduler(int ranks) : ranks_(ranks) {}
  bool reshuffles() const override { return false; }
  int history(int) const override { return 0; }
  void assign(int layer, std::span<const std::int32_t> token_ids, std::span<const int> previous_devices,
              std::vector<int>& rank) override;

 private:
  int ranks_;
};

// Sem-MoE's reshuffle by the plan's tables (policies/semmoe_token_scheduling.hpp), which must hold a
// token→device table; reads the plan's inter-layer lookback of previous devices.
class SemMoeTpTokenScheduler final : public TokenScheduler {
 public:
  SemMoeTpTokenScheduler(const PlacementPlan& plan, int ranks) : plan_(plan), ranks_(ranks) {}
  bool reshuffles() const override { return true; }
  int history(int layer) const override;
  void assign(int layer, std::span<const std::int32_t> token_ids, std::span<const int> previous_devices,
              std::vector<int>& rank) override;

 private:
  const PlacementPlan& plan_;
  int ranks_;
  TokenReshuffle reshuffle_;  // working memory, reused across calls
};

}  // namespace semsim
