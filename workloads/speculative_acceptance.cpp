#include "workloads/speculative_acceptance.hpp"

#include <algorithm>

#include "workloads/counter_rng.hpp"

namespace semsim {
namespace {

// Its own stream: the routing and lengths drawn from the same seed are untouched.
constexpr std::uint64_t kAcceptanceStream = 0x5bec0de5a11ce7edULL;

}  // namespace

int accepted_drafts(const AcceptanceModel& model, int drafts, std::uint64_t seed, int request,
                    long long verification) {
  const std::uint64_t key = hash_keys(seed ^ kAcceptanceStream, static_cast<std::uint64_t>(request),
                                      static_cast<std::uint64_t>(verification));
  if (model.kind == AcceptanceKind::kTrace) {
    const std::uint64_t pick = key % model.trace.size();
    return std::min(drafts, model.trace[pick]);
  }
  int accepted = 0;
  while (accepted < drafts) {
    const double rate = model.rates[std::min<std::size_t>(accepted, model.rates.size() - 1)];
    if (unit_interval(splitmix64(key + static_cast<std::uint64_t>(accepted))) >= rate) break;
    ++accepted;
  }
  return accepted;
}

void AcceptanceCounts::add(int drafts, int accepted_drafts, int kept_tokens) {
  ++verifications;
  accepted += accepted_drafts;
  tokens += kept_tokens;
  if (reached.size() < static_cast<std::size_t>(drafts)) {
    reached.resize(drafts, 0);
    accepted_at.resize(drafts, 0);
  }
  for (int i = 0; i < drafts && i <= accepted_drafts; ++i) {
    ++reached[i];
    if (i < accepted_drafts) ++accepted_at[i];
  }
}

}  // namespace semsim
