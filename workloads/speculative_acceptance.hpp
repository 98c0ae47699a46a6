#pragma once
// Speculative decoding (serving.speculative): a draft proposes K tokens after a request's last one,
// the target model verifies all K + 1 positions in one step and keeps the drafts up to the first it
// rejects, plus its own token at that position. How many drafts a verification accepts is drawn
// here, as a pure function of (seed, request, verification), so a request's acceptances do not
// depend on the batches it ran in, and a run without speculation draws nothing.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/choice_names.hpp"
#include "models/moe_model.hpp"

namespace semsim {

// mtp: the model's own multi-token-prediction module (DeepSeek-V3's one extra layer), run once per
// draft token; draft: a separate (dense) draft model run once per draft token.
enum class SpeculativeMethod { kMtp, kDraft };
inline constexpr ChoiceNames<SpeculativeMethod, 2> kSpeculativeMethodNames{
    {{SpeculativeMethod::kMtp, "mtp"}, {SpeculativeMethod::kDraft, "draft"}}};

// Where a verification's accepted drafts come from: per draft position i (0-based) the probability
// that it is accepted once every draft before it was (fixed: one rate for all; per_position: one
// each), or the accepted counts a serving engine logged, drawn uniformly with replacement (trace).
enum class AcceptanceKind { kFixed, kPerPosition, kTrace };
inline constexpr ChoiceNames<AcceptanceKind, 3> kAcceptanceKindNames{
    {{AcceptanceKind::kFixed, "fixed"},
     {AcceptanceKind::kPerPosition, "per_position"},
     {AcceptanceKind::kTrace, "trace"}}};

// DeepSeek-V3 technical report (arXiv 2412.19437, section 5.4.3): the second token its MTP module
// predicts is accepted 85-90 % of the time. The lower end is the default rate of every position;
// no per-position figure beyond the first draft is published.
inline constexpr double kDeepSeekMtpAcceptance = 0.85;

struct AcceptanceModel {
  AcceptanceKind kind = AcceptanceKind::kFixed;
  std::vector<double> rates;  // fixed / per_position: one per draft position
  std::vector<int> trace;     // trace: accepted drafts per logged verification, each in [0, K]
  std::string trace_file;     // trace: the file, as the scenario names it
  std::string source;         // what the rates are: "scenario", or the default's citation
};

struct SpeculativeDecoding {
  SpeculativeMethod method = SpeculativeMethod::kMtp;
  int tokens = 0;  // K, draft tokens per verification; 0: no speculative decoding
  AcceptanceModel acceptance;
  std::shared_ptr<const MoeModel> draft_model;  // method draft: the draft model's preset or file
  bool on() const { return tokens > 0; }
};

// Drafts accepted (0 .. drafts) by `request`'s `verification`-th verification (0-based).
int accepted_drafts(const AcceptanceModel& model, int drafts, std::uint64_t seed, int request,
                    long long verification);

// The acceptance a run realised: per verification, drafts accepted and tokens kept (accepted + the
// target model's own, fewer when the request needed fewer); per draft position, how often it was
// reached (every draft before it accepted) and accepted.
struct AcceptanceCounts {
  long long verifications = 0;
  long long accepted = 0;
  long long tokens = 0;
  std::vector<long long> reached, accepted_at;
  void add(int drafts, int accepted_drafts, int kept_tokens);
};

}  // namespace semsim
