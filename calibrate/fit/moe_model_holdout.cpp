#include "calibrate/fit/moe_model_holdout.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/fit/moe_shape_model.hpp"
#include "models/input_error.hpp"

namespace semsim {

namespace {

// A table's measured points as (experts, tokens, seconds).
std::vector<std::tuple<double, double, double>> measured_points(const KernelTable& table) {
  std::vector<std::tuple<double, double, double>> points;
  const std::vector<double>& tokens = table.axes.back().values;
  for (std::size_t i = 0; i < table.seconds.size(); ++i)
    if (const auto& seconds = table.seconds[i])
      points.emplace_back(table.axes.front().values[i / tokens.size()], tokens[i % tokens.size()], *seconds);
  return points;
}

}  // namespace

std::vector<MoeModelHoldout> moe_leave_model_out(const CalibrationProfile& profile, const Device& device) {
  // (backend, dtype) -> model -> its tables; std::map orders them as the result is.
  using Model = std::tuple<double, double, double>;  // hidden, experts, top_k
  std::map<std::pair<std::string, std::string>, std::map<Model, std::vector<const KernelTable*>>> families;
  for (const KernelTable& table : profile.kernels) {
    if (table.kernel != "moe_experts") continue;
    const auto shape = MoeShape::parse(table.shape);
    if (!shape) continue;  // not a shape the cross-shape model reads: it predicts nothing from it
    families[{table.implementation, table.dtype}][{shape->hidden, shape->experts, shape->top_k}].push_back(
        &table);
  }
  std::vector<MoeModelHoldout> result;
  for (const auto& [family, models] : families) {
    if (models.size() < 2) continue;
    MoeModelHoldout pooled{family.first, family.second, "all", 0, 0, {}};
    std::vector<double> all_errors;
    for (const auto& [model, held_out] : models) {
      // The rest of the backend and dtype alone: the library's default backend is then this one.
      CalibrationProfile rest;
      rest.name = profile.name;
      for (const auto& [other, tables] : models)
        if (other != model)
          for (const KernelTable* table : tables) rest.kernels.push_back(*table);
      const KernelLibrary library(rest, device, false);
      MoeModelHoldout h{family.first,
                        family.second,
                        fmt::format("hidden={:g} experts={:g} top_k={:g}", std::get<0>(model),
                                    std::get<1>(model), std::get<2>(model)),
                        static_cast<int>(held_out.size()),
                        0,
                        {}};
      std::vector<double> errors;
      for (const KernelTable* table : held_out) {
        const auto curve = library.curve("moe_experts", table->shape, table->dtype);
        for (const auto& [experts, tokens, seconds] : measured_points(*table)) {
          ++h.points;
          if (!curve) continue;
          try {
            errors.push_back(std::abs(curve->seconds(experts, tokens) - seconds) / seconds);
          } catch (const InputError&) {
            // beyond every neighbour's measured range: not a prediction the model makes
          }
        }
      }
      pooled.shapes += h.shapes;
      pooled.points += h.points;
      all_errors.insert(all_errors.end(), errors.begin(), errors.end());
      h.errors = residuals_of(std::move(errors));
      result.push_back(std::move(h));
    }
    pooled.errors = residuals_of(std::move(all_errors));
    result.push_back(std::move(pooled));
  }
  return result;
}

}  // namespace semsim
