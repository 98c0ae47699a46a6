#include "sim/step_executor.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

#include "sim/step_transfers.hpp"

namespace semsim {
namespace {

constexpr double kNever = TransferEnd::kNever;

// The event loop both executors share (see the header). Working memory is kept between steps.
class EventLoop {
 public:
  explicit EventLoop(ComputeUnits units) : units_(units) {}

  // `network` prices the transfers of a chain, which run alone, unless `chains_alone` is false
  // (other actors' transfers share the network).
  void run(const StepGraph& graph, double start, LoneCollectiveTime& network, TransferModel& transfers,
           StepSchedule& schedule, bool chains_alone = true) {
    prepare(graph, start, schedule, chains_alone);
    if (chain_) return run_chain(network);
    for (int a = 0; a < static_cast<int>(pending_.size()); ++a)
      if (pending_[a] == 0) release(a, start, -1);
    while (completed_ < pending_.size()) {
      const double compute_next = ends_.empty() ? kNever : ends_.front().first;
      const auto wait_next = std::min_element(waits_.begin(), waits_.end());
      const double wait_time = wait_next == waits_.end() ? kNever : wait_next->first;
      const double analytic_next = std::min(compute_next, wait_time);
      const TransferEnd transfer = transfers.next_end(analytic_next, *schedule_);
      if (transfer.activity >= 0) {
        schedule.activities[transfer.activity].transfer_seconds = transfer.seconds;
        end_transfer(transfer.activity, transfer.time);
      } else if (analytic_next == kNever) {
        throw std::logic_error("step executor: activities wait on each other");
      } else if (wait_time <= compute_next) {
        const int activity = wait_next->second;
        waits_.erase(wait_next);
        if (activities_[activity].kind == ActivityKind::kTimedCollective)
          end_transfer(activity, wait_time);
        else
          transfers.start(activity, activities_[activity].collective.traffic, wait_time, *schedule_);
      } else {
        std::pop_heap(ends_.begin(), ends_.end(), std::greater<>{});
        const int device = ends_.back().second;
        ends_.pop_back();
        end_on_device(device, compute_next);
      }
    }
    schedule.end = end_;
  }

 private:
  void prepare(const StepGraph& graph, double start, StepSchedule& schedule, bool chains_alone) {
    activities_ = graph.activities();
    schedule_ = &schedule;
    devices_ = graph.devices();
    const std::size_t n = activities_.size();
    schedule.start = start;
    schedule.devices = devices_;
    schedule.activities.resize(n);
    const std::size_t cells = n * static_cast<std::size_t>(devices_);
    chain_ = chains_alone;
    for (std::size_t a = 0; a < n && chain_; ++a) {
      const std::span<const int> after = activities_[a].after();
      chain_ = a == 0 ? after.empty() : after.size() == 1 && after[0] == static_cast<int>(a) - 1;
    }
    schedule.chain = chain_;
    if (chain_) return;
    for (ActivityTiming& t : schedule.activities) t = ActivityTiming{};
    schedule.device_start.resize(cells);
    schedule.device_end.resize(cells);
    schedule.slowed.assign(cells, 0);
    schedule.stream_bound.assign(cells, -1);
    pending_.resize(n);
    devices_left_.resize(n);
    successor_begin_.assign(n + 1, 0);
    compute_order_.clear();
    for (std::size_t a = 0; a < n; ++a) {
      const Activity& activity = activities_[a];
      pending_[a] = static_cast<int>(activity.after().size());
      for (const int dependency : activity.after()) ++successor_begin_[dependency + 1];
      if (activity.kind == ActivityKind::kCompute) {
        compute_order_.push_back(static_cast<int>(a));
        devices_left_[a] = devices_;
      }
    }
    for (std::size_t a = 0; a < n; ++a) successor_begin_[a + 1] += successor_begin_[a];
    successors_.resize(successor_begin_[n]);
    fill_.assign(successor_begin_.begin(), successor_begin_.end() - 1);
    for (std::size_t a = 0; a < n; ++a)
      for (const int dependency : activities_[a].after())
        successors_[fill_[dependency]++] = static_cast<int>(a);
    position_.assign(devices_, 0);
    running_.assign(devices_, false);
    anchor_.assign(devices_, start);
    done_.assign(devices_, 0.0);
    previous_end_.assign(devices_, start);
    ends_.clear();
    waits_.clear();
    in_flight_ = 0;
    rate_ = 1.0;
    completed_ = 0;
    end_ = start;
  }

  // Each activity after the one before it: nothing ever runs beside anything else, so every
  // activity starts when the previous one has ended everywhere, at full speed.
  void run_chain(LoneCollectiveTime& network) {
    double now = schedule_->start;
    for (int a = 0; a < static_cast<int>(activities_.size()); ++a) {
      const Activity& activity = activities_[a];
      ActivityTiming& t = schedule_->activities[a];
      t.release = now;
      t.released_by = a - 1;
      t.queued_behind = -1;
      if (activity.kind == ActivityKind::kCompute) {
        // Device d runs [now, now + seconds[d]]: the step keeps no per-device arrays for a chain.
        double slowest = 0;
        for (const double seconds : activity.seconds) slowest = std::max(slowest, seconds);
        t.slowest_device_seconds = slowest;
        now += slowest;  // the slowest device's end: max(now + s) is now + max(s), rounding included
      } else if (activity.kind == ActivityKind::kTimedCollective) {
        t.transfer_start = now;
        t.transfer_seconds = *activity.collective.measured_seconds;
        now += t.transfer_seconds;
      } else {
        t.transfer_start = now + activity.collective.overhead;
        t.transfer_seconds = network.seconds(activity.collective.traffic);
        now = t.transfer_start + t.transfer_seconds;
      }
      t.end = now;
    }
    schedule_->end = now;
  }

  double work(int activity, int device) const { return activities_[activity].seconds[device]; }

  void release(int activity, double now, int by) {
    ActivityTiming& t = schedule_->activities[activity];
    t.release = now;
    t.released_by = by;
    const Activity& a = activities_[activity];
    if (a.is_collective()) {  // its kernels hold their SMs until it ends
      ++in_flight_;
      set_rate(now);
      const bool timed = a.kind == ActivityKind::kTimedCollective;  // ends after its measured time
      if (timed) {
        t.transfer_start = now;
        t.transfer_seconds = *a.collective.measured_seconds;
      }
      waits_.emplace_back(now + (timed ? t.transfer_seconds : a.collective.overhead), activity);
      return;
    }
    for (int device = 0; device < devices_; ++device) try_start(device, now);
  }

  // Starts the device's next compute activity if it is released and the device is free.
  void try_start(int device, double now) {
    if (running_[device] || position_[device] == compute_order_.size()) return;
    const int activity = compute_order_[position_[device]];
    if (pending_[activity] > 0) return;
    const ActivityTiming& t = schedule_->activities[activity];
    const std::size_t cell = schedule_->at(activity, device);
    schedule_->device_start[cell] = now;
    if (position_[device] > 0 && previous_end_[device] >= t.release)
      schedule_->stream_bound[cell] = compute_order_[position_[device] - 1];
    schedule_->slowed[cell] = rate_ < 1.0;
    running_[device] = true;
    anchor_[device] = now;
    done_[device] = 0;
    ends_.emplace_back(now + work(activity, device) / rate_, device);
    std::push_heap(ends_.begin(), ends_.end(), std::greater<>{});
  }

  void end_on_device(int device, double now) {
    const int activity = compute_order_[position_[device]];
    schedule_->device_end[schedule_->at(activity, device)] = now;
    running_[device] = false;
    previous_end_[device] = now;
    ++position_[device];
    if (--devices_left_[activity] == 0) complete(activity, now);
    try_start(device, now);
  }

  void end_transfer(int activity, double now) {
    --in_flight_;
    set_rate(now);
    complete(activity, now);
  }

  void complete(int activity, double now) {
    schedule_->activities[activity].end = now;
    end_ = std::max(end_, now);
    ++completed_;
    for (std::size_t i = successor_begin_[activity]; i < successor_begin_[activity + 1]; ++i)
      if (--pending_[successors_[i]] == 0) release(successors_[i], now, activity);
  }

  // Compute speed from the collectives in flight; re-projects the running compute when it changes.
  void set_rate(double now) {
    double rate = 1.0;
    if (units_.total > 0 && in_flight_ > 0) {
      const int held = std::min(units_.total - 1, in_flight_ * units_.per_collective);
      rate = static_cast<double>(units_.total - held) / units_.total;
    }
    if (rate == rate_) return;
    ends_.clear();
    for (int device = 0; device < devices_; ++device) {
      if (!running_[device]) continue;
      const int activity = compute_order_[position_[device]];
      done_[device] += (now - anchor_[device]) * rate_;
      anchor_[device] = now;
      if (rate < 1.0) schedule_->slowed[schedule_->at(activity, device)] = 1;
      const double left = std::max(0.0, work(activity, device) - done_[device]);
      ends_.emplace_back(now + left / rate, device);
    }
    std::make_heap(ends_.begin(), ends_.end(), std::greater<>{});
    rate_ = rate;
  }

  ComputeUnits units_;
  bool chain_ = false;
  std::span<const Activity> activities_;
  StepSchedule* schedule_ = nullptr;
  int devices_ = 0;
  std::vector<int> pending_;       // [activity] dependencies not yet ended
  std::vector<int> devices_left_;  // [compute activity] devices still running it
  std::vector<std::size_t> successor_begin_, fill_;
  std::vector<int> successors_;
  std::vector<int> compute_order_;
  std::vector<std::size_t> position_;  // [device] index into compute_order_ of its current activity
  std::vector<bool> running_;
  std::vector<double> anchor_, done_;  // [device] last rate change and the work done before it
  std::vector<double> previous_end_;   // [device] when its previous compute activity ended
  // (projected end, device) of the running compute, a min-heap kept in a vector that keeps its storage.
  std::vector<std::pair<double, int>> ends_;
  // (end, collective): a collective paying its overhead, or a timed one running its measured time.
  std::vector<std::pair<double, int>> waits_;
  int in_flight_ = 0;
  double rate_ = 1.0;
  std::size_t completed_ = 0;
  double end_ = 0;
};

class BottleneckExecutor final : public StepExecutor {
 public:
  BottleneckExecutor(LoneCollectiveTime network, ComputeUnits units)
      : network_(std::move(network)), transfers_(network_), loop_(units) {}

  void run(const StepGraph& graph, StepClock& clock, StepSchedule& schedule) override {
    loop_.run(graph, clock.now(), network_, transfers_, schedule);
    schedule.shared_links = false;
    clock.advance_to(schedule.end);
  }

 private:
  LoneCollectiveTime network_;
  QueuedTransfers transfers_;
  EventLoop loop_;
};

class FlowExecutor final : public StepExecutor {
 public:
  FlowExecutor(LoneCollectiveTime network, ComputeUnits units, const Topology& topology,
               FlowPlatform platform)
      : network_(std::move(network)),
        lone_(network_),
        sharing_(make_sharing_transfers(network_, topology, platform)),
        loop_(units),
        platform_shared_(platform.shared || platform.simgrid_tasks),
        simgrid_tasks_(platform.simgrid_tasks) {}

  void run(const StepGraph& graph, StepClock& clock, StepSchedule& schedule) override {
    if (platform_shared_) {
      if (simgrid_tasks_) clock.sync();  // SimGrid's tasks start at its clock: the step's dates
      loop_.run(graph, clock.now(), network_, *sharing_, schedule, /*chains_alone=*/false);
      schedule.shared_links = true;
      clock.advance_to(schedule.end);
      return;
    }
    lone_.clear();
    loop_.run(graph, clock.now(), network_, lone_, schedule);
    schedule.shared_links = lone_.overlapped();
    if (schedule.shared_links) loop_.run(graph, clock.now(), network_, *sharing_, schedule);
    clock.advance_to(schedule.end);
  }

 private:
  LoneCollectiveTime network_;
  LoneTransfers lone_;
  std::unique_ptr<TransferModel> sharing_;
  EventLoop loop_;
  bool platform_shared_;
  bool simgrid_tasks_;
};

}  // namespace

int StepSchedule::last_device(int activity) const {
  const auto row = device_end.begin() + static_cast<std::ptrdiff_t>(at(activity, 0));
  return static_cast<int>(std::max_element(row, row + devices) - row);
}

std::unique_ptr<StepExecutor> make_bottleneck_executor(LoneCollectiveTime network, ComputeUnits units) {
  return std::make_unique<BottleneckExecutor>(std::move(network), units);
}

std::unique_ptr<StepExecutor> make_flow_executor(LoneCollectiveTime network, ComputeUnits units,
                                                 const Topology& topology, FlowPlatform platform) {
  return std::make_unique<FlowExecutor>(std::move(network), units, topology, platform);
}

}  // namespace semsim
