#include "models/memory_budget.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "models/input_error.hpp"

namespace semsim {
namespace {

double limit_of(int resource) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1e300;
  return static_cast<double>(limit.rlim_cur);
}

// cgroup v2's limit for this process's group ("max": none).
double cgroup_limit() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(in >> text) || text == "max") return 1e300;
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    return 1e300;
  }
}

double& budget() {
  static double bytes = [] {
    const double physical =
        static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    return std::min(
        {physical > 0 ? physical : 1e300, limit_of(RLIMIT_AS), limit_of(RLIMIT_DATA), cgroup_limit()});
  }();
  return bytes;
}

}  // namespace

double memory_budget_bytes() { return budget(); }

void limit_memory_budget(double bytes) { budget() = std::min(budget(), bytes); }

void check_memory_need(double bytes, const std::string& what) {
  const double allowed = memory_budget_bytes();
  if (bytes > allowed)
    throw InputError(
        fmt::format("{} needs at least {:.3g} GB of memory, more than the {:.3g} GB this machine allows "
                    "(physical memory, "
                    "ulimit and cgroup limits): refused before allocating it",
                    what, bytes / 1e9, allowed / 1e9));
}

}  // namespace semsim
