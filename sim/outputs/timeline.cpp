#include "sim/outputs/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "models/input_error.hpp"

namespace semsim {
namespace {

using TraceJson = nlohmann::json;

constexpr int kDevicesPid = 1;
constexpr int kRequestsPid = 2;
constexpr int kServingPid = 3;
constexpr long long kMaxWindowSteps = 10000;

struct Event {
  int pid = 0;
  int tid = 0;
  double ts = 0;   // microseconds
  double dur = 0;  // microseconds
  TraceJson json;
};

class PerfettoTraceBuilder {
 public:
  void span(int pid, int tid, const std::string& name, double start_s, double seconds,
            TraceJson args = TraceJson::object()) {
    Event e{pid, tid, start_s * 1e6, seconds * 1e6, {}};
    e.json = {{"name", name}, {"cat", pid == kDevicesPid ? "device" : "request"},
              {"ph", "X"},    {"ts", e.ts},
              {"dur", e.dur}, {"pid", pid},
              {"tid", tid},   {"args", std::move(args)}};
    events_.push_back(std::move(e));
  }
  // Perfetto's counter tracks are the process's, one per name and argument ("NAME ARG").
  void counter(int pid, const std::string& name, double time_s, TraceJson values) {
    Event e{pid, 0, time_s * 1e6, 0, {}};
    e.json = {{"name", name}, {"ph", "C"}, {"ts", e.ts},
              {"pid", pid},   {"tid", 0},  {"args", std::move(values)}};
    events_.push_back(std::move(e));
  }
  void name_process(int pid, const std::string& process) {
    if (named_processes_.insert(pid).second)
      metadata_.push_back(
          {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", process}}}});
  }
  void name_track(int pid, int tid, const std::string& process, const std::string& thread) {
    name_process(pid, process);
    metadata_.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", thread}}}});
  }
  // Per track in time order, an enclosing span before the spans it contains; counter samples of one
  // time in the order given.
  TraceJson events() {
    std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
      if (a.pid != b.pid || a.tid != b.tid) return std::pair(a.pid, a.tid) < std::pair(b.pid, b.tid);
      if (a.ts != b.ts) return a.ts < b.ts;
      return a.dur > b.dur;
    });
    TraceJson out = TraceJson::array();
    for (auto& m : metadata_) out.push_back(std::move(m));
    for (auto& e : events_) out.push_back(std::move(e.json));
    return out;
  }

 private:
  std::set<int> named_processes_;
  std::vector<TraceJson> metadata_;
  std::vector<Event> events_;
};

// What an activity worked on, as its span's args.
void add_work(const DeviceWork& work, TraceJson& args) {
  if (work.tokens >= 0) args["tokens"] = work.tokens;
  if (work.activations >= 0) args["activations"] = work.activations;
  if (work.active_experts >= 0) args["active_experts"] = work.active_experts;
  if (work.bytes_sent >= 0) args["bytes_sent"] = work.bytes_sent;
  if (work.bytes_received >= 0) args["bytes_received"] = work.bytes_received;
}

// Per device: the step, each MoE layer and every activity that ran on it (a collective shows on every
// device). One track per device holds its compute stream; under two-batch overlap each micro-batch
// also gets a track per device for its layers and collectives, which run beside the other's compute
// (spans on one track must nest).
void add_steps(const RunResult& run, int devices, PerfettoTraceBuilder& trace) {
  const int micro_batches = run.timeline.empty() ? 1 : run.timeline.front().micro_batches;
  for (int d = 0; d < devices; ++d) {
    trace.name_track(kDevicesPid, d, "devices", "device " + std::to_string(d));
    for (int m = 0; m < (micro_batches > 1 ? micro_batches : 0); ++m)
      trace.name_track(kDevicesPid, devices + d * micro_batches + m, "devices",
                       fmt::format("device {} micro-batch {}", d, m));
  }
  auto track = [&](int device, bool collective, int micro_batch) {
    return micro_batches > 1 && collective ? devices + device * micro_batches + micro_batch : device;
  };
  for (const StepSpans& step : run.timeline) {
    for (int d = 0; d < devices; ++d)
      trace.span(kDevicesPid, d, "step " + std::to_string(step.step), step.start, step.end - step.start,
                 {{"step", step.step}});
    // (device, layer, micro-batch) -> extent
    std::map<std::tuple<int, int, int>, std::pair<double, double>> layers;
    for (const ActivitySpan& s : step.spans) {
      TraceJson args = {{"step", step.step}, {"layer", s.layer}};
      if (micro_batches > 1) args["micro_batch"] = s.micro_batch;
      add_work(s.work, args);
      trace.span(kDevicesPid, track(s.device, s.collective, s.micro_batch),
                 std::string(phase_name(s.phase).label), s.start, s.seconds, args);
      if (s.layer < 0) continue;
      auto [extent, inserted] =
          layers.try_emplace({s.device, s.layer, s.micro_batch}, s.start, s.start + s.seconds);
      if (!inserted) {
        extent->second.first = std::min(extent->second.first, s.start);
        extent->second.second = std::max(extent->second.second, s.start + s.seconds);
      }
    }
    for (const auto& [key, extent] : layers) {
      const auto [device, layer, micro_batch] = key;
      TraceJson args = {{"step", step.step}, {"layer", layer}};
      if (micro_batches > 1) args["micro_batch"] = micro_batch;
      trace.span(kDevicesPid, track(device, true, micro_batch), "layer " + std::to_string(layer),
                 extent.first, extent.second - extent.first, args);
    }
  }
}

// Per serving rank: running and queued requests, KV cache tokens (cached, reserved) and the batch's
// tokens (prefill, decode), sampled at each step's start; at a step's end too where that state holds
// for a while: before the loop idles (nothing running or queued) and after the window's last step.
void add_counters(const RunResult& run, int devices, PerfettoTraceBuilder& trace) {
  if (run.timeline_serving.empty()) return;
  // Attention-TP serves one batch on every device: its one rank is the TP group.
  const bool tp_group = run.timeline_serving.front().at_start.size() == 1 && devices > 1;
  trace.name_process(kServingPid, fmt::format("serving (KV cache capacity {} tokens per {})",
                                              run.kv_capacity_tokens, tp_group ? "TP group" : "rank"));
  auto sample = [&](double time, const std::vector<RankState>& states, const std::vector<int>* prefill,
                    const std::vector<int>* decode) {
    for (std::size_t r = 0; r < states.size(); ++r) {
      const std::string unit = tp_group ? "TP group" : "rank " + std::to_string(r);
      const RankState& state = states[r];
      trace.counter(kServingPid, unit + " requests", time,
                    {{"running", state.running}, {"queued", state.queued}});
      trace.counter(kServingPid, unit + " KV cache tokens", time,
                    {{"cached", state.kv_cached_tokens}, {"reserved", state.kv_reserved_tokens}});
      trace.counter(kServingPid, unit + " batch tokens", time,
                    {{"prefill", prefill ? (*prefill)[r] : 0}, {"decode", decode ? (*decode)[r] : 0}});
    }
  };
  for (std::size_t i = 0; i < run.timeline_serving.size(); ++i) {
    const StepSpans& step = run.timeline[i];
    const StepServing& serving = run.timeline_serving[i];
    sample(step.start, serving.at_start, &serving.prefill_tokens, &serving.decode_tokens);
    const bool idle_after = std::all_of(serving.at_end.begin(), serving.at_end.end(),
                                        [](const RankState& s) { return s.running == 0 && s.queued == 0; });
    if (idle_after || i + 1 == run.timeline_serving.size())
      sample(step.end, serving.at_end, nullptr, nullptr);
  }
}

// Requests alive during the window, on lanes where their lifetimes do not overlap.
std::pair<int, int> add_requests(const RunResult& run, const TimelineOptions& options,
                                 PerfettoTraceBuilder& trace) {
  if (run.timeline.empty()) return {0, 0};
  const double from = run.timeline.front().start;
  const double to = run.timeline.back().end;
  std::vector<double> lane_free;  // when each lane's last request ended
  int alive = 0, shown = 0;
  for (const RequestRecord& r : run.requests) {  // in arrival order
    const double end = r.completed() ? r.finish : run.end_time;
    if (r.arrival > to || end < from) continue;
    ++alive;
    if (shown == options.max_requests) continue;
    ++shown;
    auto lane =
        std::find_if(lane_free.begin(), lane_free.end(), [&](double free) { return free <= r.arrival; });
    if (lane == lane_free.end()) {
      trace.name_track(kRequestsPid, static_cast<int>(lane_free.size()), "requests",
                       "lane " + std::to_string(lane_free.size()));
      lane = lane_free.insert(lane_free.end(), 0.0);
    }
    *lane = end;
    const int tid = static_cast<int>(lane - lane_free.begin());
    const TraceJson args = {{"id", r.id},
                            {"rank", r.rank},
                            {"input_tokens", r.input_tokens},
                            {"output_tokens", r.output_tokens},
                            {"completed", r.completed()}};
    trace.span(kRequestsPid, tid, "request " + std::to_string(r.id), r.arrival, end - r.arrival, args);
    const double first_token = r.first_token >= 0 ? r.first_token : end;
    trace.span(kRequestsPid, tid, "queue + prefill", r.arrival, first_token - r.arrival, args);
    if (end > first_token) trace.span(kRequestsPid, tid, "decode", first_token, end - first_token, args);
  }
  return {alive, shown};
}

bool is_whole(double value) {
  return std::floor(value) == value && std::abs(value) < 1e15;
}

// A window's COUNT, a whole number of steps in [1, kMaxWindowSteps]; 0 when `text` is not one.
long long window_count(const std::string& text) {
  const auto count = parse_number(text);
  return count && is_whole(*count) && *count >= 1 && *count <= kMaxWindowSteps
             ? static_cast<long long>(*count)
             : 0;
}

// The option and value that gave `window`, for error messages.
std::string window_option(const StepWindow& window) {
  if (window.from_seconds) return fmt::format("--timeline-at {}:{}", *window.from_seconds, window.count);
  return fmt::format("--timeline-steps {}:{}", window.first, window.count);
}

}  // namespace

StepWindow parse_step_window(const std::string& text, const std::string& option) {
  const auto colon = text.find(':');
  const auto first = parse_number(text.substr(0, colon));
  const long long count = colon == std::string::npos ? 0 : window_count(text.substr(colon + 1));
  if (!first || !is_whole(*first) || *first < 0 || count == 0)
    throw InputError(fmt::format("{} '{}': expected FIRST:COUNT, step numbers from 0, COUNT in [1, {}]",
                                 option, text, kMaxWindowSteps));
  return {static_cast<long long>(*first), count, std::nullopt};
}

StepWindow parse_time_window(const std::string& text, const std::string& option) {
  const auto colon = text.find(':');
  const auto seconds = parse_number(text.substr(0, colon));
  const long long count =
      colon == std::string::npos ? kDefaultTimelineSteps : window_count(text.substr(colon + 1));
  if (!seconds || *seconds < 0 || count == 0)
    throw InputError(fmt::format(
        "{} '{}': expected SECONDS[:COUNT], simulated seconds from 0, COUNT steps in [1, {}] (default {})",
        option, text, kMaxWindowSteps, kDefaultTimelineSteps));
  return {0, count, *seconds};
}

void check_window_start(const StepWindow& window, double time_limit) {
  if (window.from_seconds && time_limit > 0 && *window.from_seconds >= time_limit)
    throw InputError(
        fmt::format("{}: no step starts at or after {} s: serving.time_limit stops the run at {} s",
                    window_option(window), *window.from_seconds, time_limit));
}

void check_window_recorded(const StepWindow& window, const RunResult& run) {
  if (!run.timeline.empty()) return;
  const std::string last_start = run.steps.empty()
                                     ? ""
                                     : fmt::format(", its last step (step {}) starting at {:.9g} s",
                                                   run.steps.size() - 1, run.steps.back().start);
  if (window.from_seconds)
    throw InputError(fmt::format("{}: no step starts at or after {} s; the run lasted {:.9g} s (simulated){}",
                                 window_option(window), *window.from_seconds, run.end_time, last_start));
  throw InputError(fmt::format("{}: the run has {} steps over {:.9g} s (simulated){}", window_option(window),
                               run.steps.size(), run.end_time, last_start));
}

nlohmann::json timeline_json(const RunResult& run, const TimelineOptions& options) {
  const int devices = run.layers.empty() ? 0 : static_cast<int>(run.layers.front().device_activations.size());
  PerfettoTraceBuilder trace;
  add_steps(run, devices, trace);
  add_counters(run, devices, trace);
  const auto [alive, shown] = add_requests(run, options, trace);
  const long long first = run.timeline.empty() ? options.steps.first : run.timeline.front().step;
  TraceJson other = {{"generator", "semsim"},
                     {"steps", std::to_string(first) + ":" + std::to_string(options.steps.count)},
                     {"steps_recorded", run.timeline.size()},
                     {"requests_alive_in_window", alive},
                     {"requests_shown", shown},
                     {"kv_capacity_tokens_per_rank", run.kv_capacity_tokens}};
  if (options.steps.from_seconds) other["timeline_at_seconds"] = *options.steps.from_seconds;
  return {{"displayTimeUnit", "ms"}, {"traceEvents", trace.events()}, {"otherData", std::move(other)}};
}

}  // namespace semsim
