#include "workloads/arrival_process.hpp"

#include <algorithm>

#include "workloads/text_table.hpp"

namespace semsim {

ArrivalProcess ArrivalProcess::from_yaml(const YamlInput& in, const std::string& base_dir) {
  ArrivalProcess a;
  const std::string kind = in.required("process").as_choice({"poisson", "gamma", "fixed", "trace"});
  if (kind == "trace") {
    in.expect_map({"process", "file"});
    a.kind = Kind::kTrace;
    a.trace_path = resolve_relative(in.required("file").as_string(), base_dir);
    return a;
  }
  in.expect_map(kind == "gamma" ? std::vector<std::string>{"process", "rate", "cv"}
                                : std::vector<std::string>{"process", "rate"});
  a.kind = kind == "poisson" ? Kind::kPoisson : kind == "gamma" ? Kind::kGamma : Kind::kFixed;
  a.rate = in.required("rate").as_positive();
  if (a.kind == Kind::kGamma) a.cv = in.required("cv").as_positive();
  return a;
}

std::vector<double> ArrivalProcess::arrival_times(int count, std::mt19937_64& rng) const {
  std::vector<double> times;
  if (kind == Kind::kTrace) {
    times = read_number_column(trace_path);
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (times[i] < 0 || (i > 0 && times[i] < times[i - 1]))
        throw InputError(trace_path + ": arrival timestamps must be non-negative and non-decreasing (entry " +
                         std::to_string(i + 1) + ")");
    }
    if (count < static_cast<int>(times.size())) times.resize(std::max(count, 0));
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
        case Kind::kPoisson: now += exponential(rng); break;
        case Kind::kGamma: now += gamma(rng); break;
        default: now += 1.0 / rate; break;
      }
    }
    times.push_back(now);
  }
  return times;
}

}  // namespace semsim
