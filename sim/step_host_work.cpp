#include "sim/step_host_work.hpp"

#include <algorithm>

namespace semsim {

void StepHostWork::add(const std::vector<RankBatch>& batches, StepClock& clock, StepRecord& record) {
  bool prefill = false;
  int decode_tokens = 0;  // of the rank with the most: its requests, times K + 1 when verifying drafts
  for (const RankBatch& batch : batches) {
    record.batch_requests = std::max(record.batch_requests, batch.requests);
    decode_tokens = std::max(decode_tokens, batch.tokens);
    prefill = prefill || batch.prefill_tokens > 0;
  }
  // SGLang replays a graph only for decode-only batches the captured sizes hold, on every rank; a
  // speculative step's graph holds each request's verified drafts too.
  record.graph_batch = prefill ? 0 : cuda_graph_padded_batch(decode_tokens, settings_.cuda_graph_max_bs);
  record.eager = record.graph_batch == 0;
  // A step right after the previous one: its host work ran while that one computed. After an idle
  // wait nothing was in flight to hide it.
  constexpr double kSameInstant = 1e-9;
  record.overlapped = settings_.overlap_schedule && last_end_ >= 0 && record.start - last_end_ < kSameInstant;
  const StepFeatures features{record.batch_requests, record.eager, layers_, record.overlapped};
  record.host_seconds = host_seconds(costs_, features);
  const double exposed = exposed_host_seconds(costs_, features, clock.now() - record.start);
  record.phases[Phase::kEngine] = exposed;
  clock.advance(exposed);
  last_end_ = clock.now();
}

}  // namespace semsim
