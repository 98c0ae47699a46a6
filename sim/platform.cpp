#include "sim/platform.hpp"

#include <fmt/format.h>
#include <xbt/log.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <stdexcept>
#include <string>

namespace semsim {
namespace sg4 = simgrid::s4u;
namespace {

// Compute is costed analytically, never by SimGrid, so the host speed only has to be positive.
constexpr double kUnusedHostSpeed = 1e15;

std::string host_name(const Topology& topology, int device) {
  return fmt::format("n{}-gpu{}", device / topology.devices_per_node, device % topology.devices_per_node);
}

sg4::LinkInRoute::Direction to_simgrid(LinkDirection direction) {
  return direction == LinkDirection::kUp ? sg4::LinkInRoute::Direction::UP
                                         : sg4::LinkInRoute::Direction::DOWN;
}

}  // namespace

void configure_engine() {
  xbt_log_control_set("root.thresh:critical");  // first, so the config changes below stay quiet too
  sg4::Engine::set_config("host/model:ptask_L07");
  sg4::Engine::set_config("network/crosstraffic:0");
}

std::vector<sg4::Host*> build_platform(const Topology& topology) {
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  std::vector<sg4::Host*> hosts;
  hosts.reserve(topology.devices);
  for (int device = 0; device < topology.devices; ++device)
    hosts.push_back(zone->create_host(host_name(topology, device), kUnusedHostSpeed));

  std::vector<sg4::SplitDuplexLink*> links;
  links.reserve(topology.links.size());
  for (const TopologyLink& link : topology.links) {
    links.push_back(zone->create_split_duplex_link(link.name, link.bandwidth));
    links.back()->set_latency(link.latency);
  }

  std::vector<sg4::LinkInRoute> route;
  for (int src = 0; src < topology.devices; ++src) {
    for (int dst = 0; dst < topology.devices; ++dst) {
      if (src == dst) continue;
      route.clear();
      for (const RouteHop& hop : topology.route(src, dst))
        route.emplace_back(links[hop.link], to_simgrid(hop.direction));
      // symmetrical=false: the reverse route is added explicitly with its own directions.
      zone->add_route(hosts[src]->get_netpoint(), hosts[dst]->get_netpoint(), nullptr, nullptr, route, false);
    }
  }
  zone->seal();
  return hosts;
}

std::vector<sg4::Host*> platform_hosts(const Topology& topology, int first_device) {
  const sg4::Engine* engine = sg4::Engine::get_instance();
  std::vector<sg4::Host*> hosts;
  hosts.reserve(topology.devices);
  for (int device = 0; device < topology.devices; ++device) {
    sg4::Host* host = engine->host_by_name_or_null(host_name(topology, first_device + device));
    if (host == nullptr)
      throw std::logic_error(fmt::format("no SimGrid host for device {}: call build_platform first", device));
    hosts.push_back(host);
  }
  return hosts;
}

}  // namespace semsim
