#include "sim/dp_serving_loop.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "sim/prefix_cache.hpp"

namespace semsim {
namespace {

struct LiveRequest {
  int index = 0;                // into the request list
  int prefilled = 0;            // prompt tokens already processed
  int generated = 0;            // output tokens produced
  int chunk = 0;                // tokens in the current step
  int last_token_step = -1;     // the step that yielded its latest output token
  int gain = 0;                 // output tokens the current step gives it (more than one: accepted drafts)
  long long verifications = 0;  // speculative decoding: its verifications so far
  long long kv_own = 0;         // its KV reservation outside the rank's prefix cache
  PrefixCache::Path cached;     // the prefix-cache blocks it holds (reused, then its prompt's own)
};

struct Rank {
  std::deque<int> waiting;           // request indices, FIFO
  std::vector<LiveRequest> running;  // admitted (KV reserved)
  long long kv_reserved = 0;         // tokens, outside the prefix cache
  RankLoad load;
  PrefixCache cache{1};  // serving.prefix_cache; empty without
};

class DataParallelServer {
 public:
  DataParallelServer(const Scenario& scenario, long long kv_capacity_tokens,
                     const std::vector<Request>& requests, RequestScheduler& scheduler,
                     const RoutingSource& routing, StepPipeline& steps, const ServingProgress& progress,
                     KvHandoff* handoff, RequestFeed* feed)
      : scenario_(scenario),
        kv_capacity_tokens_(kv_capacity_tokens),
        requests_(requests),
        scheduler_(scheduler),
        routing_(routing),
        steps_(steps),
        progress_(progress),
        ranks_(scenario.dp),
        batches_(scenario.dp),
        handoff_(handoff),
        feed_(feed),
        request_seconds_(scenario.engine.on() ? scenario.calibration->engine.request_seconds : 0.0),
        speculative_(scenario.serving.speculative),
        sent_(closed_loop() ? std::min<std::size_t>(scenario.workload.concurrency, requests.size())
                            : requests.size()) {
    if (receives_handoffs())
      handoff_->set_decode_pool({[this](int index) { return assign(index); },
                                 [this](int index) { return kv_need(index); }, kv_capacity_tokens,
                                 scenario.dp});
    if (caching()) {
      const int block_tokens = scenario.workload.prefix_block_tokens();
      for (Rank& rank : ranks_) rank.cache = PrefixCache(block_tokens);
      result_.prefix_cache.on = true;
      result_.prefix_cache.block_tokens = block_tokens;
    }
    result_.kv_capacity_tokens = kv_capacity_tokens;
    result_.requests.resize(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      RequestRecord& r = result_.requests[i];
      r.id = requests[i].id;
      r.arrival = requests[i].arrival;
      r.input_tokens = requests[i].input_tokens;
      r.session = requests[i].session;
      r.turn = requests[i].turn;
      r.previous_turn = requests[i].previous_turn;
      // What this server generates: a prefill pool's request ends at its first token, so its
      // outputs count that one token (no TPOT, no inter-token gaps).
      r.output_tokens = tokens_to_generate(requests[i]);
    }
  }

  RunResult run() {
    const double limit = scenario_.serving.time_limit > 0 ? scenario_.serving.time_limit
                                                          : std::numeric_limits<double>::infinity();
    bool timeline_end_due = false;  // the last step was a timeline step whose end state comes next
    while ((feed_ || completed_ < requests_.size()) && clock_.now() < limit) {
      if (handoff_ || feed_) sync_clock();
      if (receives_handoffs())
        admit_handoffs();
      else if (routed())
        admit_routed();
      else
        admit_arrivals();
      if (timeline_end_due) result_.timeline_serving.back().at_end = rank_states();
      timeline_end_due = false;
      StepRecord record;
      if (!form_batches(record)) {
        // Nothing runs before the bootstrap queue's first request (later ones queue behind it): the
        // wait is for its decode KV, freed at a time told or yet to be told.
        if (!bootstrap_.empty()) {
          const double free = handoff_->next_kv_free(clock_.now());
          if (std::isfinite(free)) {
            clock_.advance(std::max(0.0, std::min(free, limit) - clock_.now()));
            continue;
          }
          if (!handoff_->wait_for_kv_free(limit) && clock_.now() < limit) break;
          continue;
        }
        if (routed()) {
          if (!routed_.empty()) {
            const double wake = std::min(reaches_scheduler(routed_.front()), limit);
            clock_.advance(std::max(0.0, wake - clock_.now()));
            continue;
          }
          if (!feed_->wait_for_routed(limit)) break;  // the router has sent its last request
          continue;
        }
        if (receives_handoffs()) {
          if (!handoff_->wait_for_arrival(limit)) break;  // the prefill pool is done, nothing in flight
          continue;
        }
        if (next_arrival_ < sent_) {
          const double wake = std::min(reaches_scheduler(next_arrival_), limit);
          clock_.advance(std::max(0.0, wake - clock_.now()));
          continue;
        }
        if (closed_loop() && hands_off() && sent_ < requests_.size()) {
          if (!handoff_->wait_for_finish(limit)) break;  // the next send waits for a decode finish
          continue;
        }
        break;  // nothing runnable and nothing coming
      }
      record.start = clock_.now();
      if (hands_off()) announce_last_chunks(record.start);
      timeline_end_due = steps_.run(batches_, tokens_, token_rank_, clock_, record);
      if (hands_off()) {
        sync_clock();
        handoff_->step_ended(clock_.now());
      } else if (feed_) {
        clock_.sync();  // the router hears of this step's finishes at its end
      }
      if (timeline_end_due) start_timeline_step();
      finish_step(record);
      if (progress_) progress_(clock_.now(), completed_, requests_.size());
    }
    if (hands_off()) handoff_->prefill_done();
    if (timeline_end_due) result_.timeline_serving.back().at_end = rank_states();
    clock_.sync();
    result_.end_time = clock_.now();
    if (progress_) progress_(result_.end_time, completed_, requests_.size());
    const std::size_t served = feed_ ? taken_ : requests_.size();  // behind a router: those sent here
    result_.stopped_at_time_limit = (completed_ < served || !routed_.empty()) && result_.end_time >= limit;
    for (const Rank& rank : ranks_) result_.prefix_cache.evicted_blocks += rank.cache.evicted_blocks();
    return std::move(result_);
  }

 private:
  bool hands_off() const { return handoff_ && scenario_.serving.pool == ServingPool::kPrefill; }
  // Sleeps until the clock's time, first telling the KV transfers (a pool of a disaggregated run).
  void sync_clock() {
    if (handoff_) handoff_->idle_until(scenario_.serving.pool, clock_.now());
    clock_.sync();
  }
  bool receives_handoffs() const { return handoff_ && scenario_.serving.pool == ServingPool::kDecode; }
  // Takes its requests from a router: a deployment's instance, or a disaggregated instance's prefill
  // pool (its decode pool takes them from the KV transfers and tells the router of finishes).
  bool routed() const { return feed_ && !receives_handoffs(); }
  bool closed_loop() const { return scenario_.workload.concurrency > 0; }
  // A decode pool prefills nothing: its ranks keep no prefix cache.
  bool caching() const {
    return scenario_.serving.prefix_cache && scenario_.serving.pool != ServingPool::kDecode;
  }

  // A request finished at `time`. Behind a router, the router hears of it (and in a closed loop
  // sends the next request). In a closed loop that sends the next request: here, or for a
  // disaggregated run's decode pool, to the prefill pool (whose own requests end at their first
  // token, not their last, and send nothing).
  void request_finished(int index, double time) {
    ++completed_;
    if (hands_off()) return;  // at its first token: the decode pool finishes it
    if (receives_handoffs()) handoff_->kv_freed(index, time);
    if (feed_) {
      feed_->request_finished(time);
      return;
    }
    if (!closed_loop()) return;
    if (receives_handoffs())
      handoff_->request_finished(time);
    else
      send_next(time);
  }

  // A closed loop's next request leaves the client at `time`: its arrival.
  void send_next(double time) {
    if (sent_ < requests_.size()) result_.requests[sent_++].arrival = time;
  }

  // When a request sent at its arrival reaches the scheduler, past the engine's request path.
  double reaches_scheduler(std::size_t index) const {
    return result_.requests[index].arrival + request_seconds_;
  }

  void admit_arrivals() {
    if (closed_loop() && hands_off()) {
      finish_times_.clear();
      handoff_->take_finished(finish_times_);
      for (const double time : finish_times_) send_next(time);
    }
    while (next_arrival_ < sent_ && reaches_scheduler(next_arrival_) <= clock_.now())
      queue(static_cast<int>(next_arrival_++));
    if (hands_off()) bootstrap();
  }

  // A request past the engine's request path queues at the rank the scheduler gives it; a prefill
  // pool's, first in the bootstrap queue, which it leaves in order once its decode KV is reserved.
  void queue(int index) {
    if (hands_off()) {
      bootstrap_.push_back(index);
      return;
    }
    ranks_[assign(index)].waiting.push_back(index);
  }

  void bootstrap() {
    while (!bootstrap_.empty() && handoff_->preallocate(bootstrap_.front(), clock_.now())) {
      ranks_[assign(bootstrap_.front())].waiting.push_back(bootstrap_.front());
      bootstrap_.pop_front();
    }
  }

  // Behind a router: the requests it sent here queue at their rank once past the engine's request path.
  void admit_routed() {
    sent_here_.clear();
    feed_->take_routed(sent_here_);
    for (const RoutedRequest& routed : sent_here_) {
      result_.requests[routed.index].arrival = routed.arrival;
      routed_.push_back(routed.index);
      ++taken_;
    }
    while (!routed_.empty() && reaches_scheduler(routed_.front()) <= clock_.now()) {
      queue(routed_.front());
      routed_.pop_front();
    }
    if (hands_off()) bootstrap();
  }

  // The rank the request scheduler gives request `index`, its load counted there.
  int assign(int index) {
    const Request& request = requests_[index];
    std::vector<RankLoad> loads;
    for (const Rank& rank : ranks_) {
      loads.push_back(rank.load);
      if (caching()) loads.back().cached_prefix_tokens = cached_prefix_tokens(rank.cache, request);
    }
    prompt_.clear();
    if (scheduler_.reads_prompt())
      for (int position = 0; position < request.input_tokens; ++position)
        prompt_.push_back(routing_.token_id({request.id, request.topic, position}));
    const int r = scheduler_.choose(request, prompt_, loads);
    ranks_[r].load.add(tokens_to_process(request));
    result_.requests[index].rank = r;
    return r;
  }

  // A decode pool's requests whose KV cache has landed: the prefill's token is their first.
  void admit_handoffs() {
    arrived_.clear();
    handoff_->take_arrived(arrived_);
    for (const KvArrival& kv : arrived_) {
      ++taken_;
      RequestRecord& out = result_.requests[kv.index];
      out.first_token = kv.time;
      Rank& rank = ranks_[kv.rank];
      --rank.load.outstanding_tokens;
      if (requests_[kv.index].output_tokens == 1) {
        out.finish = kv.time;
        --rank.load.requests;
        request_finished(kv.index, kv.time);
        continue;
      }
      rank.waiting.push_back(kv.index);
    }
  }

  // A prefill pool's requests whose last prompt chunk runs in the step starting at `start`.
  void announce_last_chunks(double start) {
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r)
      for (const LiveRequest& live : ranks_[r].running)
        if (live.chunk > 0 && live.prefilled + live.chunk == requests_[live.index].input_tokens)
          handoff_->last_chunk_starts(live.index, r, start);
  }

  // What a rank's step runs (serving.batching).
  enum class StepKind { kMixed, kPrefillOnly, kDecodeOnly };

  // mixed: decodes and prompt chunks together. prefill_first follows SGLang's default scheduler
  // (python/sglang/srt/managers/scheduler.py, enable_mixed_chunk off): get_next_batch_to_run runs the
  // batch get_new_batch_prefill forms (the chunked request's next chunk, then waiting requests while
  // PrefillAdder finds token budget, max_running_requests and KV room) whenever it forms one, else it
  // decodes the whole running batch. A decode pool has no prompts to prefill: it always mixes
  // (admissions decode at once).
  StepKind step_kind(const Rank& rank) const {
    if (scenario_.serving.batching == Batching::kMixed || scenario_.serving.pool == ServingPool::kDecode)
      return StepKind::kMixed;
    for (const LiveRequest& live : rank.running)
      if (live.prefilled < requests_[live.index].input_tokens) return StepKind::kPrefillOnly;
    return can_admit(rank) ? StepKind::kPrefillOnly : StepKind::kDecodeOnly;
  }

  // The KV-cache tokens waiting request `index` reserves when admitted.
  long long kv_need(int index) const {
    const Request& request = requests_[index];
    return kv_reservation(scenario_.serving.pool, request.input_tokens, request.output_tokens) +
           draft_kv_tokens();
  }

  // Speculative decoding writes each verified draft's KV past the request's last token, rejected
  // or not: K more slots. A prefill pool decodes nothing.
  long long draft_kv_tokens() const {
    return scenario_.serving.pool == ServingPool::kPrefill ? 0 : speculative_.tokens;
  }

  // Whether the rank's next waiting request may run: under the request cap, its KV footprint free.
  // KV the prefix cache holds for no running request is free too (evicted as admission needs it);
  // the request's cached prefix it holds already.
  bool can_admit(const Rank& rank) const {
    if (rank.waiting.empty() ||
        static_cast<int>(rank.running.size()) >= scenario_.serving.max_running_requests)
      return false;
    long long need = kv_need(rank.waiting.front());
    if (caching()) {
      const auto blocks = full_prefix_blocks(requests_[rank.waiting.front()], rank.cache.block_tokens());
      const int matched = rank.cache.match(blocks);
      need += rank.cache.unheld_tokens(blocks, matched) -
              static_cast<long long>(matched) * rank.cache.block_tokens();
    }
    return rank.kv_reserved + rank.cache.held_tokens() + need <= kv_capacity_tokens_;
  }

  // Admits `live` (can_admit said it fits): reserves its KV and, with a prefix cache, holds its
  // cached prefix, which it then does not prefill, evicting what its own KV needs the room of.
  void reserve_kv(Rank& rank, LiveRequest& live) {
    const Request& request = requests_[live.index];
    live.kv_own = kv_need(live.index);
    if (caching()) {
      const auto blocks = full_prefix_blocks(request, rank.cache.block_tokens());
      const int matched = rank.cache.match(blocks);
      rank.cache.hold(blocks, matched, live.cached);
      live.kv_own -= static_cast<long long>(matched) * rank.cache.block_tokens();
      const long long over = rank.kv_reserved + rank.cache.tokens() + live.kv_own - kv_capacity_tokens_;
      if (over > 0) rank.cache.evict(over);
      const long long cached = cached_prefix_tokens(rank.cache, request);
      live.prefilled = static_cast<int>(cached);
      rank.load.outstanding_tokens -= cached;
      result_.requests[live.index].cached_tokens = static_cast<int>(cached);
      PrefixCacheCounts& counts = result_.prefix_cache;
      ++counts.requests;
      counts.hit_requests += cached > 0;
      counts.prompt_tokens += request.input_tokens;
      counts.cached_tokens += cached;
    }
    rank.kv_reserved += live.kv_own;
  }

  // A prefilled prompt's full blocks enter the rank's prefix cache, still held by the request: their
  // KV is the cache's now.
  void cache_prompt(Rank& rank, LiveRequest& live) {
    const auto blocks = full_prefix_blocks(requests_[live.index], rank.cache.block_tokens());
    const long long moved =
        static_cast<long long>(blocks.size() - live.cached.size()) * rank.cache.block_tokens();
    rank.cache.insert(blocks, live.cached);
    live.kv_own -= moved;
    rank.kv_reserved -= moved;
  }

  // A finished request's output blocks enter the cache beside its prompt's (as SGLang caches a
  // finished request's whole sequence), where its session's next turn finds them. They take the room
  // its KV reservation held, so nothing is evicted. Only a session's requests have ids past their
  // prompt (no other request could share an output); a prefill pool's generated one token.
  void cache_output(Rank& rank, LiveRequest& live) {
    const auto blocks =
        finished_sequence_blocks(requests_[live.index], live.generated, rank.cache.block_tokens());
    if (blocks.size() > live.cached.size()) rank.cache.insert(blocks, live.cached);
  }

  // Builds each rank's batch: every running decode first, then prefill chunks (continuing requests,
  // then newly admitted ones) within the token budget; under prefill_first, one of the two (see
  // step_kind). Returns whether any rank has work; `record` gets the batch limits that held work back
  // and the KV use.
  bool form_batches(StepRecord& record) {
    tokens_.clear();
    token_rank_.clear();
    bool any = false;
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      Rank& rank = ranks_[r];
      RankBatch& batch = batches_[r];
      batch = RankBatch{};
      const StepKind kind = step_kind(rank);
      // SGLang's decode batch is the whole running batch (max_running_requests bounds it), not
      // limited by the prefill token budget.
      int budget = kind == StepKind::kDecodeOnly ? std::numeric_limits<int>::max()
                                                 : scenario_.serving.max_batch_tokens;
      const int decode_tokens = scenario_.serving.decode_step_tokens();
      for (LiveRequest& live : rank.running) {
        live.chunk = 0;
        if (kind == StepKind::kPrefillOnly || live.prefilled < requests_[live.index].input_tokens) continue;
        if (budget >= decode_tokens) {
          live.chunk = decode_tokens;
          budget -= decode_tokens;
        } else {
          record.token_budget_full = true;
        }
      }
      for (LiveRequest& live : rank.running) {
        const int remaining = requests_[live.index].input_tokens - live.prefilled;
        if (remaining <= 0) continue;
        live.chunk = std::min(remaining, budget);
        budget -= live.chunk;
        record.token_budget_full = record.token_budget_full || live.chunk < remaining;
      }
      // A request whose KV footprint does not fit waits for KV to free up.
      const int admitted_tokens = scenario_.serving.pool == ServingPool::kDecode ? decode_tokens : 1;
      while (kind != StepKind::kDecodeOnly && budget >= admitted_tokens && can_admit(rank)) {
        const Request& next = requests_[rank.waiting.front()];
        LiveRequest live;
        live.index = rank.waiting.front();
        reserve_kv(rank, live);
        if (scenario_.serving.pool == ServingPool::kDecode) {
          live.prefilled = next.input_tokens;           // its prompt's KV arrived with it: it decodes at once
          if (receives_handoffs()) live.generated = 1;  // the prefill pool's token
          live.chunk = decode_tokens;
        } else {
          const int remaining = next.input_tokens - live.prefilled;  // past its cached prefix
          live.chunk = std::min(remaining, budget);
          record.token_budget_full = record.token_budget_full || live.chunk < remaining;
        }
        budget -= live.chunk;
        rank.waiting.pop_front();
        rank.running.push_back(live);
      }
      // What stopped admission while requests still wait, in the order the loop above tests it.
      if (!rank.waiting.empty()) {
        if (budget < admitted_tokens)
          record.token_budget_full = true;
        else if (static_cast<int>(rank.running.size()) >= scenario_.serving.max_running_requests)
          record.request_cap_full = true;
        else
          record.kv_wait = true;
      }
      if (kv_capacity_tokens_ > 0)
        record.kv_use =
            std::max(record.kv_use, static_cast<double>(rank.kv_reserved + rank.cache.held_tokens()) /
                                        static_cast<double>(kv_capacity_tokens_));
      for (LiveRequest& live : rank.running) {
        if (live.chunk == 0) continue;
        const Request& request = requests_[live.index];
        const bool decoding = live.prefilled == request.input_tokens;
        const int first_position = decoding ? request.input_tokens + live.generated - 1 : live.prefilled;
        ++batch.requests;
        batch.tokens += live.chunk;
        if (decoding) {
          // One decode query per token: the last one and, verifying drafts, each draft.
          for (int i = 0; i < live.chunk; ++i) {
            batch.chunks.push_back({1, first_position + i});
            batch.yields_token.push_back(true);
          }
          batch.logits += live.chunk;
        } else {
          batch.chunks.push_back({live.chunk, first_position});
          batch.prefill_tokens += live.chunk;
          const bool yields_token = live.prefilled + live.chunk == request.input_tokens;
          batch.yields_token.push_back(yields_token);
          if (yields_token) ++batch.logits;
        }
        for (int i = 0; i < live.chunk; ++i) {
          tokens_.push_back({request.id, request.topic, first_position + i});
          token_rank_.push_back(r);
        }
        live.gain = decoding                                              ? verified_tokens(live)
                    : live.prefilled + live.chunk == request.input_tokens ? 1
                                                                          : 0;
        if (speculative_.on()) {
          const bool continues = live.gain > 0 && live.generated + live.gain < tokens_to_generate(request);
          batch.draft.push_back({{request.id, request.topic, first_position},
                                 decoding ? live.gain : live.chunk,
                                 !decoding,
                                 continues});
        }
      }
      any = any || batch.tokens > 0;
    }
    return any;
  }

  // Each rank's requests and KV cache now (between finish_step calls, a request's KV holds its
  // processed prompt tokens and every output token but the last, which the next step feeds in).
  std::vector<RankState> rank_states() const {
    std::vector<RankState> states;
    for (const Rank& rank : ranks_) {
      RankState& state = states.emplace_back();
      state.running = static_cast<int>(rank.running.size());
      state.queued = static_cast<int>(rank.waiting.size());
      state.kv_reserved_tokens = rank.kv_reserved + rank.cache.held_tokens();
      for (const LiveRequest& live : rank.running)
        state.kv_cached_tokens += live.prefilled + std::max(0, live.generated - 1);
    }
    return states;
  }

  // A timeline step's state at its start and its batch, before finish_step moves the requests on.
  void start_timeline_step() {
    StepServing& serving = result_.timeline_serving.emplace_back();
    serving.at_start = rank_states();
    for (const Rank& rank : ranks_) {
      int prefill = 0, decode = 0;
      for (const LiveRequest& live : rank.running)
        (live.prefilled < requests_[live.index].input_tokens ? prefill : decode) += live.chunk;
      serving.prefill_tokens.push_back(prefill);
      serving.decode_tokens.push_back(decode);
    }
  }

  void finish_step(StepRecord& record) {
    const double now = clock_.now();
    const int step = static_cast<int>(result_.steps.size());
    record.end = now;
    for (Rank& rank : ranks_) {
      for (LiveRequest& live : rank.running) {
        if (live.chunk == 0) continue;
        const Request& request = requests_[live.index];
        RequestRecord& out = result_.requests[live.index];
        if (live.prefilled < request.input_tokens) {
          live.prefilled += live.chunk;
          record.prefill_tokens += live.chunk;
          result_.prefill_tokens += live.chunk;
          rank.load.outstanding_tokens -= live.chunk;
          if (live.prefilled < request.input_tokens) continue;
          if (caching()) cache_prompt(rank, live);
          out.first_token = now;  // the prompt's last chunk yields the first output token
          out.first_token_step = step;
        } else {
          record.decode_tokens += live.gain;
          if (live.last_token_step < 0) {  // a decode pool's request: its first decode step
            out.first_token_step = step;
            // Handed over, its first token was the prefill pool's: the wait from its KV landing to
            // this step is in its TPOT and E2E, not in the step-indexed inter-token gaps.
            if (live.generated == 0) out.first_token = now;
          } else if (step > live.last_token_step + 1) {
            out.token_gaps.push_back({live.last_token_step, step});
          }
        }
        live.last_token_step = step;
        live.generated += live.gain;
        result_.output_tokens += live.gain;
        rank.load.outstanding_tokens -= live.gain;
        if (live.generated == tokens_to_generate(request)) {
          out.finish = now;
          out.finish_step = step;
        }
      }
      // Partitioned, not removed: the finished requests themselves free their KV.
      const auto done = std::stable_partition(
          rank.running.begin(), rank.running.end(),
          [&](const LiveRequest& live) { return !result_.requests[live.index].completed(); });
      for (auto it = done; it != rank.running.end(); ++it) {
        rank.kv_reserved -= it->kv_own;
        if (caching()) cache_output(rank, *it);
        rank.cache.release(it->cached);
        --rank.load.requests;
        request_finished(it->index, now);
      }
      rank.running.erase(done, rank.running.end());
    }
    result_.steps.push_back(record);
  }

  // The output tokens a decoding request's step gives it: one, or with speculative decoding the
  // drafts its verification accepts and the target model's own token after them (no more than it
  // still needs). Drawn as its batch is formed, so the draft knows who goes on decoding.
  int verified_tokens(LiveRequest& live) {
    if (!speculative_.on()) return 1;
    const Request& request = requests_[live.index];
    const int drafts = speculative_.tokens;
    const int accepted = accepted_drafts(speculative_.acceptance, drafts, scenario_.workload.seed, request.id,
                                         live.verifications++);
    const int kept = std::min(accepted + 1, tokens_to_generate(request) - live.generated);
    result_.acceptance.add(drafts, accepted, kept);
    return kept;
  }

  // A prefill pool's request ends with the token its prompt yields.
  int tokens_to_generate(const Request& request) const {
    return scenario_.serving.pool == ServingPool::kPrefill ? 1 : request.output_tokens;
  }
  // Prompt tokens to prefill (none in a decode pool) and output tokens to generate.
  long long tokens_to_process(const Request& request) const {
    const long long prompt = scenario_.serving.pool == ServingPool::kDecode ? 0 : request.input_tokens;
    return prompt + tokens_to_generate(request);
  }

  const Scenario& scenario_;
  long long kv_capacity_tokens_;
  const std::vector<Request>& requests_;
  RequestScheduler& scheduler_;
  const RoutingSource& routing_;
  std::vector<std::int32_t> prompt_;  // the arriving request's token ids, for schedulers that read them
  StepPipeline& steps_;
  const ServingProgress& progress_;
  std::vector<Rank> ranks_;
  std::vector<RankBatch> batches_;
  std::vector<TokenRef> tokens_;
  std::vector<int> token_rank_;
  KvHandoff* handoff_;
  RequestFeed* feed_;
  std::vector<RoutedRequest> sent_here_;  // behind a router: just taken from it
  std::deque<int> routed_;                // sent here, not yet past the engine's request path
  std::deque<int> bootstrap_;             // a prefill pool's, waiting for their decode KV
  std::size_t taken_ = 0;                 // requests the router sent here (a decode pool's: whose KV landed)
  double request_seconds_;  // the engine's request path: HTTP, tokenisation (0 without an engine)
  const SpeculativeDecoding& speculative_;
  std::vector<KvArrival> arrived_;
  StepClock clock_;
  std::size_t next_arrival_ = 0;
  // Requests with a send time: all in an open loop; in a closed loop the first workload.concurrency,
  // then one more as each finishes.
  std::size_t sent_;
  std::vector<double> finish_times_;  // a closed loop's prefill pool: the decode pool's, to send on
  std::size_t completed_ = 0;
  RunResult result_;
};

}  // namespace

RunResult serve_data_parallel(const Scenario& scenario, long long kv_capacity_tokens,
                              const std::vector<Request>& requests, RequestScheduler& scheduler,
                              const RoutingSource& routing, StepPipeline& steps,
                              const ServingProgress& progress, KvHandoff* handoff, RequestFeed* feed) {
  return DataParallelServer(scenario, kv_capacity_tokens, requests, scheduler, routing, steps, progress,
                            handoff, feed)
      .run();
}

}  // namespace semsim
