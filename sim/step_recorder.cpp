#include "sim/step_recorder.hpp"

#include <algorithm>

namespace semsim {
StepRecorder::StepRecorder(const MoeModel& model, int devices, StepWindow timeline)
    : moe_index_(model.layers, -1),
      devices_(devices),
      window_(timeline),
      window_first_(timeline.from_seconds ? -1 : timeline.first) {
  for (int layer = 0; layer < model.layers; ++layer)
    if (model.is_moe_layer(layer)) {
      moe_index_[layer] = static_cast<int>(layers_.size());
      layers_.push_back({layer, {}, std::vector<long long>(devices, 0)});
    }
}

// Walks back from the activity that ends the step along what bound each start: the previous
// activity of the same device's stream, the dependency that ended last, or the transfer a
// collective queued behind. Each activity on the way is attributed the time from that bound to its
// end: a compute activity its bound device's run time (its own seconds unless it ran beside a
// collective), a collective its overhead and transfer (only the transfer after queueing).
void StepRecorder::walk_critical_path(const StepGraph& graph, const StepSchedule& schedule) {
  critical_.clear();
  const auto activities = graph.activities();

  int current = -1;
  for (int a = 0; a < static_cast<int>(activities.size()); ++a)
    if (current < 0 || schedule.activities[a].end >= schedule.activities[current].end) current = a;
  int device =
      current >= 0 && activities[current].kind == ActivityKind::kCompute ? schedule.last_device(current) : 0;
  while (current >= 0) {
    const Activity& a = activities[current];
    const ActivityTiming& t = schedule.activities[current];
    int next = -1;
    if (a.kind == ActivityKind::kCompute) {
      const std::size_t cell = schedule.at(current, device);
      const double start = schedule.device_start[cell], end = schedule.device_end[cell];
      critical_.push_back({current, schedule.slowed[cell] ? end - start : a.seconds[device], start, end});
      if (schedule.stream_bound[cell] >= 0) {
        current = schedule.stream_bound[cell];
        continue;
      }
      next = t.released_by;
    } else if (t.queued_behind >= 0) {
      critical_.push_back({current, t.transfer_seconds, t.transfer_start, t.end});
      next = t.queued_behind;
    } else {
      critical_.push_back({current, a.collective.overhead + t.transfer_seconds, t.release, t.end});
      next = t.released_by;
    }
    current = next;
    if (current >= 0 && activities[current].kind == ActivityKind::kCompute)
      device = schedule.last_device(current);
  }
  std::reverse(critical_.begin(), critical_.end());
}

// Time on the critical path spent in compute while a collective was in flight: the communication
// that overlap hid.
double StepRecorder::hidden_communication(const StepGraph& graph, const StepSchedule& schedule) {
  const auto activities = graph.activities();
  communicating_.clear();
  for (std::size_t a = 0; a < activities.size(); ++a)
    if (activities[a].is_collective())
      communicating_.emplace_back(schedule.activities[a].release, schedule.activities[a].end);
  if (communicating_.empty()) return 0;
  std::sort(communicating_.begin(), communicating_.end());
  std::size_t merged = 0;  // merge into disjoint intervals, in place
  for (std::size_t i = 1; i < communicating_.size(); ++i) {
    if (communicating_[i].first <= communicating_[merged].second)
      communicating_[merged].second = std::max(communicating_[merged].second, communicating_[i].second);
    else
      communicating_[++merged] = communicating_[i];
  }
  communicating_.resize(merged + 1);
  double hidden = 0;
  std::size_t i = 0;
  for (const Segment& s : critical_) {
    if (activities[s.activity].kind != ActivityKind::kCompute) continue;
    while (i < communicating_.size() && communicating_[i].second <= s.start) ++i;
    for (std::size_t j = i; j < communicating_.size() && communicating_[j].first < s.end; ++j)
      hidden += std::max(
          0.0, std::min(s.end, communicating_[j].second) - std::max(s.start, communicating_[j].first));
  }
  return hidden;
}

bool StepRecorder::in_window(double step_start) {
  if (window_first_ < 0 && window_.from_seconds && step_start >= *window_.from_seconds)
    window_first_ = steps_;
  return window_first_ >= 0 && steps_ >= window_first_ && steps_ < window_first_ + window_.count;
}

double device_seconds(const Activity& a, const StepSchedule& schedule, int activity, int device) {
  const ActivityTiming& t = schedule.activities[static_cast<std::size_t>(activity)];
  if (a.is_collective()) return t.end - t.release;
  if (schedule.chain) return a.seconds[static_cast<std::size_t>(device)];
  const std::size_t cell = schedule.at(activity, device);
  return schedule.device_end[cell] - schedule.device_start[cell];
}

void StepRecorder::add_spans(const StepGraph& graph, const StepSchedule& schedule) {
  StepSpans& spans = timeline_.emplace_back();
  spans.step = steps_;
  spans.start = schedule.start;
  spans.end = schedule.end;
  const auto activities = graph.activities();
  for (std::size_t i = 0; i < activities.size(); ++i) {
    const Activity& a = activities[i];
    const ActivityTiming& t = schedule.activities[i];
    spans.micro_batches = std::max(spans.micro_batches, a.micro_batch + 1);
    ActivitySpan span{a.phase, a.is_collective(), a.layer,           a.micro_batch,
                      0,       t.release,         t.end - t.release, {}};
    if (a.is_collective()) {
      const CopyTraffic& traffic = a.collective.traffic;
      for (int device = 0; device < devices_; ++device) {
        long long sent = 0, received = 0;
        for (int other = 0; other < devices_; ++other) {
          if (other == device) continue;
          sent += traffic.copies_at(device, other);
          received += traffic.copies_at(other, device);
        }
        span.device = device;
        span.work.bytes_sent = static_cast<double>(sent) * traffic.bytes_per_copy;
        span.work.bytes_received = static_cast<double>(received) * traffic.bytes_per_copy;
        spans.spans.push_back(span);
      }
      continue;
    }
    for (int device = 0; device < devices_; ++device) {
      span.device = device;
      if (!a.work.empty()) span.work = a.work[device];
      span.start =
          schedule.chain ? t.release : schedule.device_start[schedule.at(static_cast<int>(i), device)];
      span.seconds = device_seconds(a, schedule, static_cast<int>(i), device);
      spans.spans.push_back(span);
    }
  }
}

bool StepRecorder::record(const StepGraph& graph, const StepSchedule& schedule, StepTimingRecord& step) {
  const auto activities = graph.activities();
  if (schedule.chain) {
    record_chain(activities, schedule, step);
  } else {
    walk_critical_path(graph, schedule);
    record_path(activities, step);
    step.comm_hidden = hidden_communication(graph, schedule);
  }
  const bool recorded = in_window(schedule.start);
  if (recorded) add_spans(graph, schedule);
  ++steps_;
  return recorded;
}

void StepRecorder::add(const Activity& a, double seconds, StepTimingRecord& step) {
  step.phases[a.phase] += seconds;
  if (a.layer >= 0 && a.layer < static_cast<int>(moe_index_.size()) && moe_index_[a.layer] >= 0)
    layers_[moe_index_[a.layer]].phases[a.phase] += seconds;
  if (a.is_collective()) step.comm_exposed += seconds;
}

// A chain's critical path is every activity, each for its slowest device's seconds; nothing is hidden.
void StepRecorder::record_chain(std::span<const Activity> activities, const StepSchedule& schedule,
                                StepTimingRecord& step) {
  for (std::size_t i = 0; i < activities.size(); ++i) {
    const Activity& a = activities[i];
    const ActivityTiming& t = schedule.activities[i];
    add(a,
        a.kind == ActivityKind::kCompute ? t.slowest_device_seconds
                                         : a.collective.overhead + t.transfer_seconds,
        step);
  }
}

void StepRecorder::record_path(std::span<const Activity> activities, StepTimingRecord& step) {
  for (const Segment& s : critical_) add(activities[s.activity], s.seconds, step);
}

}  // namespace semsim
