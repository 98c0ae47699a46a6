#include "sim/scenario_speculative.hpp"

#include <fmt/format.h>

#include <cmath>

#include "models/presets.hpp"
#include "sim/scenario.hpp"
#include "workloads/text_table.hpp"

namespace semsim {
namespace {

constexpr int kMaxDraftTokens = 16;

AcceptanceModel read_acceptance(const YamlInput& in, int drafts, const std::string& base_dir) {
  AcceptanceModel model;
  model.source = "scenario";
  if (in.has("trace")) {
    in.expect_map({"trace"});
    model.kind = AcceptanceKind::kTrace;
    const YamlInput file = in.required("trace");
    model.trace_file = file.as_string();
    for (const NumberOnLine& entry : read_number_column(file, base_dir)) {
      if (entry.value < 0 || entry.value > drafts || entry.value != std::floor(entry.value))
        fail_at_line(resolve_relative(file.as_string(), base_dir), entry.line,
                     fmt::format("accepted drafts must be integers in [0, {}] (serving.speculative.tokens), "
                                 "got {}",
                                 drafts, entry.value));
      model.trace.push_back(static_cast<int>(entry.value));
    }
    if (model.trace.empty()) file.fail("the acceptance trace holds no verification");
    return model;
  }
  model.kind = read_choice(in.required("dist"), kAcceptanceKindNames);
  if (model.kind == AcceptanceKind::kTrace)
    in.required("dist").fail("an acceptance trace is given as {trace: FILE}");
  if (model.kind == AcceptanceKind::kFixed) {
    in.expect_map({"dist", "rate"});
    model.rates.assign(static_cast<std::size_t>(drafts), in.required("rate").as_double_in(0, 1));
    return model;
  }
  in.expect_map({"dist", "rates"});
  const YamlInput rates = in.required("rates");
  if (!rates.is_sequence()) rates.fail("expected a list of acceptance rates, one per draft token");
  const std::vector<YamlInput> items = rates.items();
  if (static_cast<int>(items.size()) != drafts)
    rates.fail(
        fmt::format("{} rates for {} draft tokens (serving.speculative.tokens): give one per draft "
                    "position",
                    items.size(), drafts));
  for (const YamlInput& rate : items) model.rates.push_back(rate.as_double_in(0, 1));
  return model;
}

}  // namespace

void read_speculative(const YamlInput& in, const std::string& base_dir, Scenario& s) {
  in.expect_map({"method", "tokens", "acceptance", "draft_model"});
  SpeculativeDecoding& spec = s.serving.speculative;
  spec.method = read_choice(in.required("method"), kSpeculativeMethodNames);
  spec.tokens = static_cast<int>(in.required("tokens").as_int_in(1, kMaxDraftTokens));
  // A decoding request's step runs its last token and the drafts: the token budget must hold them.
  if (s.serving.max_batch_tokens < spec.tokens + 1)
    in.required("tokens").fail(
        fmt::format("{} draft tokens and the last one exceed serving.max_batch_tokens {}", spec.tokens,
                    s.serving.max_batch_tokens));
  if (spec.method == SpeculativeMethod::kDraft) {
    const YamlInput draft = in.required("draft_model");
    spec.draft_model = std::make_shared<const MoeModel>(load_model(draft, base_dir));
    if (!spec.draft_model->dense())
      draft.fail(
          fmt::format("draft model '{}' has experts: a draft model runs whole on each rank, so it "
                      "must be dense",
                      spec.draft_model->name));
    if (s.attention == AttentionMode::kTensorParallel)
      in.required("method").fail(
          "a draft model under attention: tp (sharded over the group) is not simulated; use method: mtp or "
          "attention: dp");
    if (!in.has("acceptance"))
      in.fail("a draft model's acceptance depends on the pair of models: give acceptance (no default)");
  } else if (const auto draft = in.optional("draft_model")) {
    draft->fail("applies only to method: draft (mtp drafts with the model's own MTP layer)");
  }
  if (const auto acceptance = in.optional("acceptance")) {
    spec.acceptance = read_acceptance(*acceptance, spec.tokens, base_dir);
    return;
  }
  spec.acceptance.kind = AcceptanceKind::kFixed;
  spec.acceptance.rates.assign(static_cast<std::size_t>(spec.tokens), kDeepSeekMtpAcceptance);
  spec.acceptance.source = "DeepSeek-V3 technical report, arXiv 2412.19437, section 5.4.3 (85-90 %)";
}

}  // namespace semsim
