#include "sim/cli/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "models/input_error.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;

constexpr int kDevicesPid = 1;
constexpr int kRequestsPid = 2;

struct Event {
  int pid = 0;
  int tid = 0;
  double ts = 0;   // microseconds
  double dur = 0;  // microseconds
  Json json;
};

class PerfettoTraceBuilder {
 public:
  void span(int pid, int tid, const std::string& name, double start_s, double seconds,
            Json args = Json::object()) {
    Event e{pid, tid, start_s * 1e6, seconds * 1e6, {}};
    e.json = {{"name", name}, {"cat", pid == kDevicesPid ? "device" : "request"},
              {"ph", "X"},    {"ts", e.ts},
              {"dur", e.dur}, {"pid", pid},
              {"tid", tid},   {"args", std::move(args)}};
    events_.push_back(std::move(e));
  }
  void name_track(int pid, int tid, const std::string& process, const std::string& thread) {
    if (named_processes_.insert(pid).second)
      metadata_.push_back(
          {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", process}}}});
    metadata_.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", thread}}}});
  }
  // Per track in time order, an enclosing span before the spans it contains.
  Json events() {
    std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) {
      if (a.pid != b.pid || a.tid != b.tid) return std::pair(a.pid, a.tid) < std::pair(b.pid, b.tid);
      if (a.ts != b.ts) return a.ts < b.ts;
      return a.dur > b.dur;
    });
    Json out = Json::array();
    for (auto& m : metadata_) out.push_back(std::move(m));
    for (auto& e : events_) out.push_back(std::move(e.json));
    return out;
  }

 private:
  std::set<int> named_processes_;
  std::vector<Json> metadata_;
  std::vector<Event> events_;
};

// Per device: the step, each MoE layer and every activity that ran on it (a collective shows on every
// device). One track per device holds its compute stream; under two-batch overlap each micro-batch
// also gets a track per device for its layers and collectives, which run beside the other's compute
// (spans on one track must nest).
void add_steps(const RunResult& run, PerfettoTraceBuilder& trace) {
  const int devices = run.layers.empty() ? 0 : static_cast<int>(run.layers.front().device_activations.size());
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
    for (int d = 0; d < devices; ++d) {
      trace.span(kDevicesPid, d, "step " + std::to_string(step.step), step.start, step.end - step.start,
                 {{"step", step.step}});
      std::map<std::pair<int, int>, std::pair<double, double>> layers;  // (layer, micro-batch) -> extent
      for (const ActivitySpan& s : step.spans) {
        if (s.device >= 0 && s.device != d) continue;
        Json args = {{"step", step.step}, {"layer", s.layer}};
        if (micro_batches > 1) args["micro_batch"] = s.micro_batch;
        trace.span(kDevicesPid, track(d, s.collective, s.micro_batch), std::string(phase_name(s.phase).label),
                   s.start, s.seconds, args);
        if (s.layer < 0) continue;
        auto [extent, inserted] = layers.try_emplace({s.layer, s.micro_batch}, s.start, s.start + s.seconds);
        if (!inserted) {
          extent->second.first = std::min(extent->second.first, s.start);
          extent->second.second = std::max(extent->second.second, s.start + s.seconds);
        }
      }
      for (const auto& [key, extent] : layers) {
        Json args = {{"step", step.step}, {"layer", key.first}};
        if (micro_batches > 1) args["micro_batch"] = key.second;
        trace.span(kDevicesPid, track(d, true, key.second), "layer " + std::to_string(key.first),
                   extent.first, extent.second - extent.first, args);
      }
    }
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
    const Json args = {{"id", r.id},
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

}  // namespace

StepWindow parse_step_window(const std::string& text, const std::string& option) {
  const auto colon = text.find(':');
  const auto first = parse_number(text.substr(0, colon));
  const auto count = colon == std::string::npos ? std::nullopt : parse_number(text.substr(colon + 1));
  if (!first || !count || *first != static_cast<long long>(*first) ||
      *count != static_cast<long long>(*count) || *first < 0 || *count < 1 || *count > 10000)
    throw InputError(option + " '" + text +
                     "': expected FIRST:COUNT, step numbers from 0, COUNT in [1, 10000]");
  return {static_cast<long long>(*first), static_cast<long long>(*count)};
}

nlohmann::json timeline_json(const RunResult& run, const TimelineOptions& options) {
  PerfettoTraceBuilder trace;
  add_steps(run, trace);
  const auto [alive, shown] = add_requests(run, options, trace);
  return {{"displayTimeUnit", "ms"},
          {"traceEvents", trace.events()},
          {"otherData",
           {{"generator", "semsim"},
            {"steps", std::to_string(options.steps.first) + ":" + std::to_string(options.steps.count)},
            {"steps_recorded", run.timeline.size()},
            {"requests_alive_in_window", alive},
            {"requests_shown", shown}}}};
}

}  // namespace semsim
