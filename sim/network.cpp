// level_bytes, StepClock and the closed-form time of a lone collective.
#include "sim/network.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace semsim {
namespace sg4 = simgrid::s4u;
namespace {

void check_devices(int traffic_devices, int devices) {
  if (traffic_devices != devices)
    throw std::invalid_argument(
        fmt::format("traffic matrix of {} devices on a topology of {}", traffic_devices, devices));
}

// Precomputes every pair's route as channel indices in one flat array with a fixed stride (routes
// shorter than the longest are padded with a sink channel that is never read), so that one call
// walks the matrix once with no allocation and no pointer chasing. On large groups loads accumulate
// in interleaved banks (pair % banks): consecutive pairs share channels (a row shares its source's
// link), and one copy would chain every addition on the previous one; with four, dense 256-device
// matrices run twice as fast. Small groups instead gather: per channel, the list of the pairs that
// cross it, summed in a register (no chain through memory; clearing and summing banks would cost
// more). Both add a channel's pairs in increasing pair order, so both give the same bits.
}  // namespace

class LoneCollectiveTime::Model {
 public:
  explicit Model(const Topology& topology)
      : devices_(topology.devices), bank_mask_(topology.devices >= 64 ? 3 : 0) {
    const std::size_t pairs = static_cast<std::size_t>(devices_) * devices_;
    for (const auto& route : topology.routes) stride_ = std::max(stride_, route.size());
    channels_ = topology.links.size() * 2;
    const auto sink = static_cast<std::uint32_t>(channels_);
    route_channels_.assign(pairs * stride_, sink);
    route_latency_.assign(pairs, 0.0);
    for (std::size_t pair = 0; pair < pairs; ++pair) {
      const auto& route = topology.routes[pair];
      for (std::size_t i = 0; i < route.size(); ++i) {
        route_channels_[pair * stride_ + i] = static_cast<std::uint32_t>(channel(route[i]));
        route_latency_[pair] += topology.links[route[i].link].latency;
      }
    }
    seconds_per_byte_.resize(channels_);
    for (std::size_t channel = 0; channel < channels_; ++channel)
      seconds_per_byte_[channel] = 1.0 / topology.links[channel / 2].bandwidth;
    channel_bytes_.resize(banks() * bank_size());
    if (banks() == 1) {
      std::vector<std::vector<std::uint32_t>> crossing(channels_);
      for (std::size_t pair = 0; pair < pairs; ++pair)
        for (const RouteHop& hop : topology.routes[pair])
          crossing[channel(hop)].push_back(static_cast<std::uint32_t>(pair));
      list_begin_.push_back(0);
      for (const auto& list : crossing) {
        crossing_pairs_.insert(crossing_pairs_.end(), list.begin(), list.end());
        list_begin_.push_back(crossing_pairs_.size());
      }
      const auto transpose = [this](std::uint32_t pair) {
        return static_cast<std::uint32_t>(pair % devices_ * devices_ + pair / devices_);
      };
      for (const std::uint32_t pair : crossing_pairs_) crossing_transposed_.push_back(transpose(pair));
      for (std::size_t pair = 0; pair < pairs; ++pair)
        if (route_latency_[pair] > 0) slowest_first_.push_back(static_cast<std::uint32_t>(pair));
      std::stable_sort(
          slowest_first_.begin(), slowest_first_.end(),
          [this](std::uint32_t a, std::uint32_t b) { return route_latency_[a] > route_latency_[b]; });
      for (const std::uint32_t pair : slowest_first_) slowest_first_transposed_.push_back(transpose(pair));
      clamped_.resize(pairs);
    }
  }

  // seconds() of the matrix `traffic` fills in, from integer sums of its copies: equal bit for bit
  // while no count is negative and every channel's bytes are an integer below 2^52 (the products and
  // all their partial sums are then exact, whatever the order); nullopt where that does not hold.
  // Small groups only.
  std::optional<double> copies_seconds(const CopyTraffic& traffic) {
    check_devices(traffic.devices, devices_);
    const double bytes_per_copy = traffic.bytes_per_copy;
    if (banks() != 1 || !(bytes_per_copy > 0) || bytes_per_copy != std::floor(bytes_per_copy))
      return std::nullopt;
    // Per channel the copies of its pairs, read where the (possibly transposed) pair keeps them.
    const std::uint32_t* pair = (traffic.transposed ? crossing_transposed_ : crossing_pairs_).data();
    const long long* copies = traffic.copies.data();
    double transfer = 0;
    long long busiest = 0;
    long long signs = 0;  // negative once any count read is
    for (std::size_t channel = 0; channel < channels_; ++channel) {
      long long channel_copies = 0;
      for (std::size_t i = list_begin_[channel]; i < list_begin_[channel + 1]; ++i) {
        channel_copies += copies[pair[i]];
        signs |= copies[pair[i]];
      }
      busiest = std::max(busiest, channel_copies);
      transfer = std::max(transfer,
                          static_cast<double>(channel_copies) * bytes_per_copy * seconds_per_byte_[channel]);
    }
    if (signs < 0 || static_cast<double>(busiest) * bytes_per_copy >= 0x1p52) return std::nullopt;
    // The slowest route that carries anything: scanning routes slowest first usually stops at once,
    // where a max over every pair would chain one comparison per pair.
    double latency = 0;
    const std::vector<std::uint32_t>& slowest_first =
        traffic.transposed ? slowest_first_transposed_ : slowest_first_;
    for (std::size_t i = 0; i < slowest_first.size(); ++i)
      if (copies[slowest_first[i]] > 0) {
        latency = route_latency_[slowest_first_[i]];
        break;
      }
    return latency + transfer;
  }

  double seconds(const TrafficMatrix& traffic) {
    check_devices(traffic.devices, devices_);
    if (banks() == 1) return gathered_seconds(traffic);
    std::fill(channel_bytes_.begin(), channel_bytes_.end(), 0.0);
    double latency = 0;
    const std::size_t pairs = traffic.bytes.size();
    // Branch-free: a zero (or negative/NaN, treated as zero) entry adds nothing and no latency;
    // decode-time matrices are sparse in an unpredictable pattern, so a skip test would mispredict.
    // The diagonal routes only to the sink with zero latency, so it needs no test of its own.
    for (std::size_t pair = 0; pair < pairs; ++pair) {
      const double bytes = traffic.bytes[pair] > 0 ? traffic.bytes[pair] : 0.0;
      latency = std::max(latency, bytes > 0 ? route_latency_[pair] : 0.0);
      double* bank = &channel_bytes_[(pair & bank_mask_) * bank_size()];
      const std::uint32_t* channel = &route_channels_[pair * stride_];
      for (std::size_t i = 0; i < stride_; ++i) bank[channel[i]] += bytes;
    }
    double transfer = 0;
    for (std::size_t channel = 0; channel < channels_; ++channel) {
      double bytes = 0;
      for (std::size_t bank = 0; bank < banks(); ++bank)
        bytes += channel_bytes_[bank * bank_size() + channel];
      transfer = std::max(transfer, bytes * seconds_per_byte_[channel]);
    }
    return latency + transfer;
  }

 private:
  // The same sums for small groups, channel by channel (see above).
  double gathered_seconds(const TrafficMatrix& traffic) {
    double latency = 0;
    for (std::size_t pair = 0; pair < clamped_.size(); ++pair) {
      const double bytes = traffic.bytes[pair] > 0 ? traffic.bytes[pair] : 0.0;
      clamped_[pair] = bytes;
      latency = std::max(latency, bytes > 0 ? route_latency_[pair] : 0.0);
    }
    double transfer = 0;
    const std::uint32_t* pair = crossing_pairs_.data();
    for (std::size_t channel = 0; channel < channels_; ++channel) {
      double bytes = 0;
      for (std::size_t i = list_begin_[channel]; i < list_begin_[channel + 1]; ++i)
        bytes += clamped_[pair[i]];
      transfer = std::max(transfer, bytes * seconds_per_byte_[channel]);
    }
    return latency + transfer;
  }

  std::size_t bank_size() const { return channels_ + 1; }  // the channels and the sink
  std::size_t banks() const { return bank_mask_ + 1; }

  int devices_;
  std::size_t bank_mask_;  // banks - 1, banks a power of two (a mask, not a division, per pair)
  std::size_t stride_ = 0;
  std::size_t channels_ = 0;
  std::vector<std::uint32_t> route_channels_;  // [pair * stride_ + hop]
  std::vector<double> route_latency_;          // [pair]
  std::vector<double> seconds_per_byte_;       // [channel]
  std::vector<double> channel_bytes_;          // scratch: [bank * bank_size() + channel]
  // Gathering (one bank):
  std::vector<std::uint32_t> crossing_pairs_;       // per channel its pairs, one list after another
  std::vector<std::uint32_t> crossing_transposed_;  // the same lists as (dst * devices + src)
  std::vector<std::uint32_t> slowest_first_;        // pairs with latency, by decreasing latency
  std::vector<std::uint32_t> slowest_first_transposed_;
  std::vector<std::size_t> list_begin_;  // [channel], and the end
  std::vector<double> clamped_;          // scratch: [pair] bytes, negatives and NaN as 0
};

namespace {

template <typename Traffic>
LevelBytes sum_levels(const Traffic& traffic, const Topology& topology) {
  check_devices(traffic.devices, topology.devices);
  LevelBytes result;
  if (topology.devices <= topology.devices_per_node) {  // one node: every byte stays on scale-up links
    for (int src = 0; src < traffic.devices; ++src)
      for (int dst = 0; dst < traffic.devices; ++dst)
        result.scale_up += src != dst ? traffic.at(src, dst) : 0.0;
    return result;
  }
  for (int src = 0; src < traffic.devices; ++src) {
    for (int dst = 0; dst < traffic.devices; ++dst) {
      if (src == dst) continue;
      (topology.same_node(src, dst) ? result.scale_up : result.scale_out) += traffic.at(src, dst);
    }
  }
  return result;
}

}  // namespace

LevelBytes level_bytes(const TrafficMatrix& traffic, const Topology& topology) {
  return sum_levels(traffic, topology);
}

// Whole copies of a whole-byte payload (any a model's hidden size gives) summed as integers, then
// times the payload: bit for bit the pairs' bytes summed in turn wherever every sum is an integer
// below 2^53 (each addition then exact); elsewhere the pairs' bytes in turn. The engine asks it per
// MoE layer, and a dependent chain of floating-point additions costs more than the layer's counting.
LevelBytes level_bytes(const CopyTraffic& traffic, const Topology& topology) {
  const double payload = traffic.bytes_per_copy;
  if (!(std::isfinite(payload) && payload >= 0 && payload == std::floor(payload)))
    return sum_levels(traffic, topology);
  check_devices(traffic.devices, topology.devices);
  // Off the diagonal, a transposed matrix holds the same copies on each level.
  const std::span<const long long> copies = traffic.copies;
  const auto devices = static_cast<std::size_t>(traffic.devices);
  long long scale_up = 0, scale_out = 0;
  bool negative = false;
  if (topology.devices <= topology.devices_per_node) {  // one node: all of it, less the diagonal
    for (std::size_t pair = 0; pair < devices * devices; ++pair) {
      scale_up += copies[pair];
      negative |= copies[pair] < 0;
    }
    for (std::size_t device = 0; device < devices; ++device) scale_up -= copies[device * devices + device];
  } else {
    for (int src = 0; src < traffic.devices; ++src)
      for (int dst = 0; dst < traffic.devices; ++dst) {
        if (src == dst) continue;
        const long long count = copies[static_cast<std::size_t>(src) * devices + dst];
        const bool same_node = topology.same_node(src, dst);
        scale_up += same_node ? count : 0;
        scale_out += same_node ? 0 : count;
        negative |= count < 0;
      }
  }
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  const LevelBytes bytes{static_cast<double>(scale_up) * payload, static_cast<double>(scale_out) * payload};
  if (negative || bytes.scale_up >= kExactIntegers || bytes.scale_out >= kExactIntegers)
    return sum_levels(traffic, topology);
  return bytes;
}

void CopyTraffic::fill(TrafficMatrix& traffic) const {
  if (traffic.devices != devices) traffic = TrafficMatrix(devices);
  for (int src = 0; src < devices; ++src)
    for (int dst = 0; dst < devices; ++dst) traffic.at(src, dst) = at(src, dst);
}

void StepClock::advance_to(double time) {
  pending_ = std::max(0.0, time - sg4::Engine::get_clock());
}

void StepClock::sync() {
  if (pending_ > 0) sg4::this_actor::sleep_for(pending_);
  pending_ = 0;
}

double StepClock::now() const {
  return sg4::Engine::get_clock() + pending_;
}

LoneCollectiveTime::LoneCollectiveTime(const Topology& topology, BandwidthFactors factors)
    : model_(std::make_unique<Model>(topology)), factors_(std::move(factors)) {}
LoneCollectiveTime::~LoneCollectiveTime() = default;
LoneCollectiveTime::LoneCollectiveTime(LoneCollectiveTime&&) noexcept = default;

double LoneCollectiveTime::seconds(const TrafficMatrix& traffic) {
  return model_->seconds(factors_.apply(traffic));
}

double LoneCollectiveTime::seconds(const CopyTraffic& traffic) {
  if (traffic.bytes_per_copy == 0) return 0.0;  // a collective timed as a whole (DeepEP's measured kernels)
  if (traffic.one_per_pair) {
    const auto [known, added] =
        one_per_pair_seconds_.try_emplace({traffic.devices, traffic.bytes_per_copy}, 0.0);
    if (added) {
      CopyTraffic alone = traffic;
      alone.one_per_pair = false;
      known->second = seconds(alone);
    }
    return known->second;
  }
  // The bandwidth factors scale each pair's bytes non-linearly: only the matrix path applies them.
  if (factors_.empty())
    if (const std::optional<double> seconds = model_->copies_seconds(traffic)) return *seconds;
  traffic.fill(filled_);
  return seconds(filled_);
}

const TrafficMatrix& LoneCollectiveTime::task_bytes(const CopyTraffic& traffic) {
  traffic.fill(filled_);
  filled_ = factors_.apply(filled_);
  for (int device = 0; device < filled_.devices; ++device) filled_.at(device, device) = 0;
  for (double& bytes : filled_.bytes)
    if (!(bytes > 0)) bytes = 0;
  return filled_;
}

double bottleneck_seconds(const TrafficMatrix& traffic, const Topology& topology) {
  return LoneCollectiveTime::Model(topology).seconds(traffic);
}

}  // namespace semsim
