#include "workloads/length_distribution.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <numeric>

#include <cmath>

#include "workloads/text_table.hpp"

namespace semsim {

LengthDistribution LengthDistribution::from_yaml(const YamlInput& in, const std::string& base_dir) {
  LengthDistribution d;
  const std::string kind = in.required("dist").as_choice({"fixed", "uniform", "lognormal", "file"});
  if (kind == "fixed") {
    in.expect_map({"dist", "value"});
    d.kind = Kind::kFixed;
    d.value = static_cast<int>(in.required("value").as_int_in(1, kMaxLength));
  } else if (kind == "uniform") {
    in.expect_map({"dist", "min", "max"});
    d.kind = Kind::kUniform;
    d.min = static_cast<int>(in.required("min").as_int_in(1, kMaxLength));
    d.max = static_cast<int>(in.required("max").as_int_in(d.min, kMaxLength));
  } else if (kind == "lognormal") {
    in.expect_map({"dist", "median", "sigma", "min", "max"});
    d.kind = Kind::kLognormal;
    d.median = in.required("median").as_double_in(1, kMaxLength);
    d.sigma = in.required("sigma").as_double_in(0, 10);
    d.min = static_cast<int>(in.get_int_in("min", 1, 1, kMaxLength));
    d.max = static_cast<int>(in.required("max").as_int_in(d.min, kMaxLength));
  } else {
    in.expect_map({"dist", "file"});
    d.kind = Kind::kFile;
    const YamlInput file = in.required("file");
    for (const NumberOnLine& entry : read_number_column(file, base_dir)) {
      if (entry.value < 1 || entry.value > kMaxLength || entry.value != std::floor(entry.value))
        fail_at_line(resolve_relative(file.as_string(), base_dir), entry.line,
                     fmt::format("lengths must be integers in [1, {}], got {}", kMaxLength, entry.value));
      d.samples.push_back(static_cast<int>(entry.value));
    }
  }
  return d;
}

int LengthDistribution::draw(std::mt19937_64& rng) const {
  switch (kind) {
    case Kind::kFixed:
      return value;
    case Kind::kUniform:
      return std::uniform_int_distribution<int>(min, max)(rng);
    case Kind::kLognormal: {
      const double x = std::lognormal_distribution<double>(std::log(median), sigma)(rng);
      return std::clamp(static_cast<int>(std::lround(x)), min, max);
    }
    case Kind::kFile:
      return samples[std::uniform_int_distribution<std::size_t>(0, samples.size() - 1)(rng)];
  }
  return value;
}

int LengthDistribution::upper_bound() const {
  switch (kind) {
    case Kind::kFixed:
      return value;
    case Kind::kFile:
      return *std::max_element(samples.begin(), samples.end());
    default:
      return max;
  }
}

double LengthDistribution::mean() const {
  switch (kind) {
    case Kind::kFixed:
      return value;
    case Kind::kUniform:
      return (min + max) / 2.0;
    case Kind::kLognormal:
      return std::clamp(median * std::exp(sigma * sigma / 2), static_cast<double>(min),
                        static_cast<double>(max));
    case Kind::kFile:
      return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  }
  return value;
}

}  // namespace semsim
