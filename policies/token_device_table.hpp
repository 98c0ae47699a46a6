#pragma once
// Sem-MoE's token→device table T with confidence T_p (design.md, "Sem-MoE, precisely"): per MoE
// layer and vocabulary token, the device the token's hidden state should be on when the layer
// starts, and how sure the profile is (the share of the token's profiled activations that device
// hosts).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "policies/placement.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {

struct TokenDeviceTable {
  std::vector<std::vector<std::int16_t>> device;  // [layer][token]; -1: no entry
  std::vector<std::vector<float>> confidence;     // [layer][token] in [0, 1]; 0 without an entry
  // [token]: the text of each token id, what identifies it in another trace (token_table_for). ""
  // for a token without one (a synthetic vocabulary's: its id is the generator's token type), and
  // empty for a table read from a version-1 placement file (ids of the profiled trace only).
  std::vector<std::string> texts;

  // A profile without token identities (an id-less trace) gives a table of no tokens: empty too.
  bool empty() const { return device.empty() || device.front().empty(); }
  friend bool operator==(const TokenDeviceTable&, const TokenDeviceTable&) = default;
};

// Share of a profiled token's activations at `layer` that `device` hosts (T_p for that device).
double token_confidence(const Placement& placement, const RoutingProfile& profile, int layer,
                        std::int32_t token, int device);

// Completes T for every profiled token the policy left without an entry (all of them for policies
// that place experts only): per layer, tokens already assigned keep their device and count toward
// its load; the others, in decreasing frequency (ties: lower id), each go to the device hosting most
// of their profiled activations among the devices whose token load (profiled occurrences) stays
// within balance × mean; when none has room, the least loaded. So every plan keeps the balance
// promise co-clustering policies make. An empty `table` is sized first.
void complete_token_devices(TokenDeviceTable& table, const Placement& placement,
                            const RoutingProfile& profile, double balance);

// Per token, the one device a request-level (Attention-DP) vote uses: the device most MoE layers'
// T entries name (ties: lower id); -1 for tokens without entries. One look-up per prompt token.
std::vector<std::int16_t> dp_vote_devices(const TokenDeviceTable& table, int devices);

// votes[d] = prompt tokens whose vote device (dp_vote_devices) is d; unknown or out-of-vocabulary
// ids do not vote. Returns how many tokens voted.
int count_prompt_votes(const std::vector<std::int16_t>& vote_device, std::span<const std::int32_t> prompt,
                       std::span<int> votes);

// Fills entries for tokens never profiled whose normalized text matches profiled tokens
// (RoutingProfile's documented fallback for unseen tokens): the device most of those tokens'
// occurrences were given (ties: lower id), with the occurrence-weighted mean of their T_p.
void fill_unprofiled_by_text(TokenDeviceTable& table, const RoutingProfile& profile);

// How a table keyed by one vocabulary was matched to another's tokens (token_table_for).
struct TokenTableMatch {
  long long vocabulary = 0;          // tokens of the target vocabulary
  long long by_text = 0;             // found by their text (or, without one, by their id)
  long long by_normalized_text = 0;  // found only by their normalized text
  bool same_vocabulary = false;      // the table was keyed by this vocabulary already
  long long unmatched() const { return vocabulary - by_text - by_normalized_text; }
};

// T re-keyed to the ids of `vocabulary` (id -> text), so that a table profiled on one trace applies
// to any trace of the same model, whatever order its tokens first appeared in. A token takes the
// entries of the table's token with its text; a token without a text, those of the table's token
// with its id when that one has no text either; a token whose text the table lacks, per layer the
// most confident entry (ties: lower table id) among the table's tokens of its normalized text (the
// profile's fallback for unseen tokens, workloads/PROFILE_FORMAT.md); otherwise none (a scheduler's
// unknown token). A table without texts (a version-1 placement file) applies id for id and only to
// a vocabulary no larger than its own (InputError otherwise).
TokenDeviceTable token_table_for(const TokenDeviceTable& table, const std::vector<std::string>& vocabulary,
                                 TokenTableMatch& match);

}  // namespace semsim
