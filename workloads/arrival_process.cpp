#include "workloads/arrival_process.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "workloads/text_table.hpp"

namespace semsim {

ArrivalProcess ArrivalProcess::from_yaml(const YamlInput& in, const std::string& base_dir) {
  ArrivalProcess a;
  const std::string kind = in.required("process").as_choice({"poisson", "gamma", "fixed", "trace"});
  if (kind == "trace") {
    in.expect_map({"process", "file"});
    a.kind = Kind::kTrace;
    const YamlInput file = in.required("file");
    for (const NumberOnLine& entry : read_number_column(file, base_dir)) {
      if (entry.value < 0 || entry.value > limits::kSimulatedSeconds ||
          (!a.trace_times.empty() && entry.value < a.trace_times.back()))
        fail_at_line(resolve_relative(file.as_string(), base_dir), entry.line,
                     fmt::format("arrival timestamps must be non-negative and non-decreasing, at most {:g} s",
                                 limits::kSimulatedSeconds));
      a.trace_times.push_back(entry.value);
    }
    return a;
  }
  in.expect_map(kind == "gamma" ? std::vector<std::string>{"process", "rate", "cv"}
                                : std::vector<std::string>{"process", "rate"});
  a.kind = kind == "poisson" ? Kind::kPoisson : kind == "gamma" ? Kind::kGamma : Kind::kFixed;
  a.rate = in.required("rate").as_double_in(limits::kRequestRate);
  if (a.kind == Kind::kGamma) a.cv = in.required("cv").as_double_in(limits::kArrivalCv);
  return a;
}

std::vector<double> ArrivalProcess::arrival_times(int count, std::mt19937_64& rng) const {
  std::vector<double> times;
  if (kind == Kind::kTrace) {
    times.assign(trace_times.begin(),
                 trace_times.begin() + std::min<std::size_t>(std::max(count, 0), trace_times.size()));
    return times;
  }
  times.reserve(std::max(count, 0));
  double now = 0;
  // Gamma with shape k = 1/cv^2 and mean 1/rate has the requested CV; cv = 1 is Poisson.
  const double shape = 1.0 / (cv * cv);
  std::gamma_distribution<double> gamma(shape, 1.0 / (rate * shape));
  std::exponential_distribution<double> exponential(rate);
  for (int i = 0; i < count; ++i) {
    if (i > 0 || kind != Kind::kFixed) {
      switch (kind) {
        case Kind::kPoisson:
          now += exponential(rng);
          break;
        case Kind::kGamma:
          now += gamma(rng);
          break;
        default:
          now += 1.0 / rate;
          break;
      }
    }
    times.push_back(now);
  }
  return times;
}

}  // namespace semsim
