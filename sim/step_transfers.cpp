#include "sim/step_transfers.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include <algorithm>
#include <utility>

#include "sim/link_sharing.hpp"
#include "sim/platform.hpp"
#include "sim/shared_links.hpp"

namespace semsim {
namespace sg4 = simgrid::s4u;

void LoneTransfers::clear() {
  in_flight_.clear();
  overlapped_ = false;
}

void LoneTransfers::start(int activity, const CopyTraffic& traffic, double now, StepSchedule& schedule) {
  const double seconds = network_.seconds(traffic);
  schedule.activities[activity].transfer_start = now;
  if (seconds > 0)
    for (const TransferEnd& other : in_flight_)
      overlapped_ = overlapped_ || (other.seconds > 0 && other.time > now);
  in_flight_.push_back({now + seconds, activity, seconds});
}

TransferEnd LoneTransfers::next_end(double until, StepSchedule&) {
  auto first =
      std::min_element(in_flight_.begin(), in_flight_.end(), [](const TransferEnd& a, const TransferEnd& b) {
        return std::pair(a.time, a.activity) < std::pair(b.time, b.activity);
      });
  if (first == in_flight_.end() || first->time > until) return {until, -1};
  const TransferEnd ended = *first;
  in_flight_.erase(first);
  return ended;
}

void QueuedTransfers::start(int activity, const CopyTraffic& traffic, double now, StepSchedule& schedule) {
  queue_.push({activity, network_.seconds(traffic)});
  if (queue_.size() == 1) begin_head(now, -1, schedule);
}

TransferEnd QueuedTransfers::next_end(double until, StepSchedule& schedule) {
  if (queue_.empty() || head_end_ > until) return {until, -1};
  const TransferEnd ended{head_end_, queue_.front().activity, queue_.front().seconds};
  queue_.pop();
  if (!queue_.empty()) begin_head(ended.time, ended.activity, schedule);
  return ended;
}

void QueuedTransfers::begin_head(double now, int behind, StepSchedule& schedule) {
  ActivityTiming& t = schedule.activities[queue_.front().activity];
  t.transfer_start = now;
  t.queued_behind = behind;
  head_end_ = now + queue_.front().seconds;
}

namespace {

// The sharing, in SimGrid or without it (make_sharing_transfers); a transfer with no byte to move
// ends as it starts.
class SharingTransfers : public TransferModel {
 public:
  explicit SharingTransfers(LoneCollectiveTime& network) : network_(network) {}

  void start(int activity, const CopyTraffic& traffic, double now, StepSchedule& schedule) final {
    schedule.activities[activity].transfer_start = now;
    const TrafficMatrix& bytes = network_.task_bytes(traffic);
    if (std::none_of(bytes.bytes.begin(), bytes.bytes.end(), [](double b) { return b > 0; })) {
      finished_.push_back({now, activity});
      return;
    }
    start_moving(activity, bytes, now);
  }

  TransferEnd next_end(double until, StepSchedule&) final {
    if (finished_.empty()) return next_moving_end(until);
    const auto [start, activity] = finished_.back();
    finished_.pop_back();
    return {clock(start), activity, 0.0};
  }

 protected:
  virtual void start_moving(int activity, const TrafficMatrix& bytes, double now) = 0;
  virtual TransferEnd next_moving_end(double until) = 0;
  // The time now, when the event loop last gave it as `known`.
  virtual double clock(double known) const = 0;

 private:
  LoneCollectiveTime& network_;
  std::vector<std::pair<double, int>> finished_;  // (start, activity) with nothing to move
};

// The tasks themselves, in SimGrid, the reference the others are tested against. Blocks in simulated
// time: the SimGrid clock follows the step.
class SimGridTransfers final : public SharingTransfers {
 public:
  SimGridTransfers(LoneCollectiveTime& network, const Topology& topology, int first_device)
      : SharingTransfers(network),
        hosts_(platform_hosts(topology, first_device)),
        no_flops_(hosts_.size(), 0.0) {}

 private:
  void start_moving(int activity, const TrafficMatrix& bytes, double now) override {
    task_start_.push_back(now);
    const sg4::ExecPtr task =
        sg4::Exec::init()->set_hosts(hosts_)->set_flops_amounts(no_flops_)->set_bytes_amounts(bytes.bytes);
    task->start();
    tasks_.push_back(task);
    task_activity_.push_back(activity);
  }

  double clock(double) const override { return sg4::Engine::get_clock(); }

  TransferEnd next_moving_end(double until) override {
    const double now = sg4::Engine::get_clock();
    if (tasks_.empty()) {
      if (until == TransferEnd::kNever) return {until, -1};
      if (until > now) sg4::this_actor::sleep_for(until - now);
      return {until, -1};
    }
    const double timeout = until == TransferEnd::kNever ? -1.0 : std::max(0.0, until - now);
    const ssize_t index = sg4::Exec::wait_any_for(tasks_, timeout);
    if (index < 0) return {until, -1};
    const double end = sg4::Engine::get_clock();
    const TransferEnd ended{end, task_activity_[index], end - task_start_[index]};
    tasks_.erase(tasks_.begin() + index);
    task_activity_.erase(task_activity_.begin() + index);
    task_start_.erase(task_start_.begin() + index);
    return ended;
  }

  std::vector<sg4::Host*> hosts_;
  std::vector<double> no_flops_;
  std::vector<sg4::ExecPtr> tasks_;
  std::vector<int> task_activity_;
  std::vector<double> task_start_;
};

// The same sharing worked out without SimGrid (sim/link_sharing.hpp), for transfers that have the
// platform to themselves: the step's own, with no other actor's traffic on it.
class ModelledSharingTransfers final : public SharingTransfers {
 public:
  ModelledSharingTransfers(LoneCollectiveTime& network, const Topology& topology)
      : SharingTransfers(network), links_(topology, simgrid_sharing_settings()) {}

 private:
  void start_moving(int activity, const TrafficMatrix& bytes, double now) override {
    links_.start(activity, bytes, now);
  }
  double clock(double known) const override { return known; }

  TransferEnd next_moving_end(double until) override {
    const LinkSharing::End ended = links_.next_end(until);
    return {ended.time, ended.id, ended.seconds};
  }

  LinkSharing links_;
};

// The step's transfers as one party of the platform's shared links (sim/shared_links.hpp), among
// the other actors' transfers.
class SharedLinksTransfers final : public SharingTransfers {
 public:
  SharedLinksTransfers(LoneCollectiveTime& network, SharedLinks& links, int party, int first_device)
      : SharingTransfers(network),
        links_(links),
        party_(party >= 0 ? party : links.join()),
        first_device_(first_device) {}

 private:
  void start_moving(int activity, const TrafficMatrix& bytes, double now) override {
    links_.start(party_, activity, bytes, now, first_device_);
  }
  double clock(double known) const override { return known; }

  TransferEnd next_moving_end(double until) override {
    const LinkSharing::End ended = links_.wait_end(party_, until);
    return {ended.time, ended.id, ended.seconds};
  }

  SharedLinks& links_;
  int party_;
  int first_device_;
};

}  // namespace

std::unique_ptr<TransferModel> make_sharing_transfers(LoneCollectiveTime& network, const Topology& topology,
                                                      FlowPlatform platform) {
  if (platform.simgrid_tasks)
    return std::make_unique<SimGridTransfers>(network, topology, platform.first_device);
  if (platform.shared)
    return std::make_unique<SharedLinksTransfers>(network, *platform.shared, platform.party,
                                                  platform.first_device);
  return std::make_unique<ModelledSharingTransfers>(network, topology);
}

}  // namespace semsim
