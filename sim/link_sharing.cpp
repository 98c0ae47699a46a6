#include "sim/link_sharing.hpp"

#include <algorithm>
#include <cfloat>
#include <limits>
#include <span>
#include <stdexcept>

namespace semsim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// SimGrid's double_update: subtracts, and what is left below the precision is nothing.
void subtract(double& value, double amount, double precision) {
  value -= amount;
  if (value < precision) value = 0.0;
}

}  // namespace

LinkSharing::LinkSharing(const Topology& topology, SharingSettings settings)
    : devices_(static_cast<std::size_t>(topology.devices)), settings_(settings) {
  const std::size_t pairs = static_cast<std::size_t>(topology.devices) * topology.devices;
  route_begin_.reserve(pairs + 1);
  route_latency_.resize(pairs);
  for (std::size_t pair = 0; pair < pairs; ++pair) {
    route_begin_.push_back(route_channels_.size());
    for (const RouteHop& hop : topology.routes[pair])
      route_channels_.push_back(static_cast<std::uint32_t>(channel(hop)));
    route_latency_[pair] = topology.route_latency(static_cast<int>(pair) / topology.devices,
                                                  static_cast<int>(pair) % topology.devices);
  }
  route_begin_.push_back(route_channels_.size());
  const std::size_t channels = topology.links.size() * 2;
  capacity_.resize(channels);
  for (std::size_t c = 0; c < channels; ++c) capacity_[c] = topology.links[c / 2].bandwidth;
  load_.assign(channels, 0.0);
  remaining_.resize(channels);
  usage_.resize(channels);
}

void LinkSharing::start(int id, const TrafficMatrix& bytes, double now, int first_device) {
  move_to(now);
  // The task's weights as SimGrid's L07Action sums them: pair by pair, each hop adding its bytes.
  const std::size_t n = static_cast<std::size_t>(bytes.devices);
  const std::size_t first = static_cast<std::size_t>(first_device);
  for (std::size_t src = 0; src < n; ++src)
    for (std::size_t dst = 0; dst < n; ++dst)
      if (const double b = bytes.bytes[src * n + dst]; b > 0)
        add_pair((first + src) * devices_ + first + dst, b);
  add_task(id, now);
}

void LinkSharing::start_pair(int id, int src, int dst, double bytes, double now) {
  move_to(now);
  if (bytes > 0) add_pair(static_cast<std::size_t>(src) * devices_ + dst, bytes);
  add_task(id, now);
}

void LinkSharing::move_to(double now) {
  if (now <= clock_) return;
  advance(now - clock_);
  clock_ = now;
  end_finished();
}

void LinkSharing::add_pair(std::size_t pair, double bytes) {
  latency_ = std::max(latency_, route_latency_[pair]);
  latency_bytes_ = std::max(latency_bytes_, route_latency_[pair] * bytes);
  for (std::size_t hop = route_begin_[pair]; hop < route_begin_[pair + 1]; ++hop) {
    const std::uint32_t c = route_channels_[hop];
    if (load_[c] == 0) touched_.push_back(c);
    load_[c] += bytes;
  }
}

void LinkSharing::add_task(int id, double now) {
  if (touched_.empty()) throw std::invalid_argument("link sharing: a transfer with nothing to move");
  Task task;
  if (!spare_.empty()) {
    task = std::move(spare_.back());
    spare_.pop_back();
  }
  task.id = id;
  task.start = now;
  task.latency_left = latency_;
  task.bound = latency_bytes_ > 0 ? settings_.tcp_gamma / (2.0 * latency_bytes_) : -1.0;
  task.remains = 1.0;
  task.rate = 0;
  task.channels.assign(touched_.begin(), touched_.end());
  task.weights.clear();
  for (const std::uint32_t c : touched_) {
    task.weights.push_back(load_[c]);
    load_[c] = 0;
  }
  touched_.clear();
  modified_ = modified_ || latency_ <= 0;
  latency_ = latency_bytes_ = 0;
  tasks_.push_back(std::move(task));
}

LinkSharing::End LinkSharing::next_end(double until) {
  while (ended_.empty()) {
    if (tasks_.empty()) {
      if (until != kNever) clock_ = std::max(clock_, until);
      return {until, -1, 0.0};
    }
    const double delta = next_delta();
    if (delta == kNever && until == kNever) throw std::logic_error("link sharing: transfers that never end");
    if (clock_ + delta > until) {
      advance(until - clock_);
      clock_ = until;
      end_finished();
      if (ended_.empty()) return {until, -1, 0.0};
      break;
    }
    advance(delta);
    clock_ += delta;
    end_finished();
  }
  const End ended = ended_.front();
  ended_.pop_front();
  return ended;
}

// The next event as SimGrid's models give it: a latency paid, or the work of one task done.
double LinkSharing::next_delta() {
  if (modified_) solve();
  double delta = kNever;
  for (const Task& task : tasks_) {
    if (task.latency_left > 0)
      delta = std::min(delta, task.latency_left);
    else if (task.rate > 0)
      delta = std::min(delta, task.remains / task.rate);
  }
  return delta;
}

// HostL07Model::update_actions_state: latencies first (one paid joins the sharing at the next
// solve), then the work done at the rates solved.
void LinkSharing::advance(double delta) {
  const double work_precision = settings_.capacity_precision * settings_.time_precision;
  for (Task& task : tasks_) {
    if (task.latency_left > 0) {
      if (task.latency_left > delta)
        subtract(task.latency_left, delta, settings_.time_precision);
      else
        task.latency_left = 0;
      modified_ = modified_ || task.latency_left <= 0;
    }
    subtract(task.remains, task.rate * delta, work_precision);
  }
}

void LinkSharing::end_finished() {
  for (auto task = tasks_.begin(); task != tasks_.end();) {
    if (task->remains > 0 || task->latency_left > 0) {
      ++task;
      continue;
    }
    ended_.push_back({clock_, task->id, clock_ - task->start});
    spare_.push_back(std::move(*task));
    task = tasks_.erase(task);
    modified_ = true;
  }
}

// lmm::FairBottleneck::bottleneck_solve over the tasks past their latency. Each round, every
// channel offers its capacity left in equal shares to the unsaturated tasks crossing it; every
// unsaturated task grows by the least its channels (and its bound) allow; a channel left with
// nothing saturates the tasks crossing it. As in SimGrid, a task saturated earlier keeps taking its
// last increment from the channels still open.
void LinkSharing::solve() {
  modified_ = false;
  const std::size_t channels = capacity_.size();
  element_begin_.assign(channels + 1, 0);
  std::size_t unsaturated = 0;
  for (Task& task : tasks_) {
    task.rate = 0;
    task.unsaturated = task.latency_left <= 0;
    if (!task.unsaturated) continue;
    ++unsaturated;
    for (const std::uint32_t c : task.channels) ++element_begin_[c + 1];
  }
  if (unsaturated == 0) return;
  for (std::size_t c = 0; c < channels; ++c) element_begin_[c + 1] += element_begin_[c];
  elements_.resize(element_begin_[channels]);
  fill_.assign(element_begin_.begin(), element_begin_.end() - 1);
  for (std::uint32_t t = 0; t < tasks_.size(); ++t) {
    if (!tasks_[t].unsaturated) continue;
    for (std::size_t i = 0; i < tasks_[t].channels.size(); ++i)
      elements_[fill_[tasks_[t].channels[i]]++] = {t, tasks_[t].weights[i]};
  }
  active_.clear();
  for (std::uint32_t c = 0; c < channels; ++c) {
    if (element_begin_[c] == element_begin_[c + 1]) continue;
    active_.push_back(c);
    remaining_[c] = capacity_[c];
  }
  const auto crossing = [this](std::uint32_t c) {
    return std::span(elements_.begin() + static_cast<std::ptrdiff_t>(element_begin_[c]),
                     elements_.begin() + static_cast<std::ptrdiff_t>(element_begin_[c + 1]));
  };
  while (unsaturated > 0) {
    std::erase_if(active_, [&](std::uint32_t c) {
      const auto users = std::count_if(crossing(c).begin(), crossing(c).end(),
                                       [&](const auto& e) { return tasks_[e.first].unsaturated; });
      if (users > 0) usage_[c] = remaining_[c] / static_cast<double>(users);
      return users == 0;
    });
    for (Task& task : tasks_) {
      if (!task.unsaturated) continue;
      double increment = DBL_MAX;
      for (std::size_t i = 0; i < task.channels.size(); ++i)
        increment = std::min(increment, usage_[task.channels[i]] / task.weights[i]);
      if (task.bound > 0) increment = std::min(increment, task.bound - task.rate);
      task.mu = increment;
      task.rate += increment;
      if (task.rate == task.bound) {
        task.unsaturated = false;
        --unsaturated;
      }
    }
    std::erase_if(active_, [&](std::uint32_t c) {
      for (const auto& [t, weight] : crossing(c))
        subtract(remaining_[c], weight * tasks_[t].mu, settings_.capacity_precision);
      if (remaining_[c] > 0) return false;
      for (const auto& element : crossing(c)) {
        Task& task = tasks_[element.first];
        if (task.unsaturated) {
          task.unsaturated = false;
          --unsaturated;
        }
      }
      return true;
    });
  }
}

}  // namespace semsim
