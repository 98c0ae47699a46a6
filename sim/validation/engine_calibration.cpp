#include "sim/validation/engine_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "calibrate/format/profile.hpp"
#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/outputs/run_csvs.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::vector<RetimedStep> retimed_steps(const RunResult& run, int layers) {
  std::vector<RetimedStep> steps;
  for (const StepRecord& s : run.steps)
    steps.push_back(
        {s.phases.total() - s.phases[Phase::kEngine], {s.batch_requests, s.eager, layers, s.overlapped}});
  return steps;
}

// The steps' simulated durations as prefix sums: [first, last] takes at[last + 1] - at[first].
std::vector<double> simulated_prefix(const RunResult& run) {
  std::vector<double> at{0.0};
  for (const StepRecord& s : run.steps) at.push_back(at.back() + s.phases.total());
  return at;
}

double window(const std::vector<double>& at, int first, int last) {
  return last < first ? 0.0 : at[static_cast<std::size_t>(last) + 1] - at[static_cast<std::size_t>(first)];
}

// The first step that starts once the request has reached the scheduler: the first it could join.
int first_joinable_step(const RunResult& pool, double reaches_scheduler) {
  constexpr double kSameInstant = 1e-9;
  const auto at = std::lower_bound(pool.steps.begin(), pool.steps.end(), reaches_scheduler - kSameInstant,
                                   [](const StepRecord& s, double t) { return s.start < t; });
  return static_cast<int>(at - pool.steps.begin());
}

// A completed request's windows: TTFT over `ttft_pool`'s steps from the first it could join to that of
// its first token (`prefilled`: its record there); TPOT over `tpot_pool`'s steps from the first that
// starts once its first token is out to that of its last; TTFT and TPOT as `end_to_end` has them.
RequestWindows request_windows(const RequestRecord& prefilled, const RunResult& ttft_pool,
                               const std::vector<double>& ttft_at, const RequestRecord& end_to_end,
                               const RunResult& tpot_pool, const std::vector<double>& tpot_at,
                               double request_seconds) {
  RequestWindows w;
  w.ttft_first = first_joinable_step(ttft_pool, prefilled.arrival + request_seconds);
  w.ttft_last = prefilled.first_token_step;
  w.ttft_rest = end_to_end.first_token - end_to_end.arrival - request_seconds -
                window(ttft_at, w.ttft_first, w.ttft_last);
  w.tpot_first = first_joinable_step(tpot_pool, end_to_end.first_token);
  w.tpot_last = end_to_end.finish_step;
  w.tpot_rest = end_to_end.finish - end_to_end.first_token - window(tpot_at, w.tpot_first, w.tpot_last);
  w.output_tokens = end_to_end.output_tokens;
  return w;
}

Json windows_json(const RequestWindows& w) {
  return Json::array(
      {w.ttft_first, w.ttft_last, w.ttft_rest, w.tpot_first, w.tpot_last, w.tpot_rest, w.output_tokens});
}

Json steps_json(const std::vector<RetimedStep>& steps) {
  Json out = Json::array();
  for (const RetimedStep& s : steps)
    out.push_back(Json::array({s.kernel_seconds, s.features.batch_requests, s.features.eager ? 1 : 0,
                               s.features.overlapped ? 1 : 0}));
  return out;
}

RetimingTable server_table(const RunResult& run, int layers, double request_seconds) {
  RetimingTable table;
  table.pools.push_back(retimed_steps(run, layers));
  const std::vector<double> at = simulated_prefix(run);
  for (const RequestRecord& r : run.requests)
    if (r.completed() && r.first_token_step >= 0)
      table.requests.push_back(request_windows(r, run, at, r, run, at, request_seconds));
  return table;
}

// Disaggregated: TTFT from the prefill pool's steps (the KV transfer and the wait for the decode pool
// kept as simulated), TPOT from the decode pool's. The pools list the workload's requests in the same
// order.
RetimingTable pools_table(const DisaggregatedResult& run, int layers, double request_seconds) {
  RetimingTable table;
  table.pools = {retimed_steps(run.prefill, layers), retimed_steps(run.decode, layers)};
  table.tpot_pool = 1;
  const std::vector<double> prefill_at = simulated_prefix(run.prefill);
  const std::vector<double> decode_at = simulated_prefix(run.decode);
  for (std::size_t i = 0; i < run.decode.requests.size() && i < run.prefill.requests.size(); ++i) {
    const RequestRecord& prefilled = run.prefill.requests[i];
    const RequestRecord& decoded = run.decode.requests[i];
    if (prefilled.id != decoded.id || !decoded.completed() || prefilled.first_token_step < 0) continue;
    table.requests.push_back(
        request_windows(prefilled, run.prefill, prefill_at, decoded, run.decode, decode_at, request_seconds));
  }
  return table;
}

std::string cost_us(double seconds) {
  return fmt::format("{:.1f}", seconds * 1e6);
}

// What each cost is, for the report: EngineCostVector's order.
constexpr const char* kCostMeanings[kEngineCostCount][2] = {
    {"step_seconds", "scheduler loop per step: batch formation, output processing"},
    {"request_step_seconds", "per request in a step's batch: input preparation, sampling, streaming"},
    {"eager_layer_seconds", "per model layer of a step launched kernel by kernel (prefill, large decode)"},
    {"graph_step_seconds", "a decode step replayed from a captured CUDA graph"},
    {"request_seconds", "per request, once: HTTP, tokenisation, reaching the scheduler (in TTFT)"}};

std::string bound_hit(int cost, double seconds) {
  if (seconds <= kEngineCostMin * 1.01) return "at the lower bound (0)";
  if (seconds >= kEngineCostMax[cost] * 0.99)
    return fmt::format("at the upper bound ({:g} ms)", kEngineCostMax[cost] * 1e3);
  return "";
}

std::string optional_ms(const std::optional<double>& ms) {
  return ms ? fmt::format("{:.2f}", *ms) : "-";
}

std::string error_text(const std::optional<double>& ms, double measured) {
  return ms ? fmt::format("{:+.1f}%", 100 * relative_error(*ms, measured)) : "-";
}

void write_profile(const fs::path& path, const Device& device, const EngineCosts& costs) {
  const auto measured = CalibrationProfile::measured(device);
  CalibrationProfile profile = *measured;
  profile.engine = costs;
  write_text_file(path.string(), profile.to_yaml());
}

}  // namespace

std::string configuration_of(const MeasuredServingRun& run) {
  return fmt::format("{} {} {}", run.model_path, run.mode, layout_label(run, false));
}

std::string system_of_device(const std::string& device) {
  std::string system = device;
  std::replace(system.begin(), system.end(), '-', '_');
  return system;
}

std::vector<EngineFold> leave_one_configuration_out(const std::vector<std::string>& configurations) {
  std::vector<EngineFold> folds;
  for (const std::string& c : configurations)
    if (std::none_of(folds.begin(), folds.end(), [&](const EngineFold& f) { return f.configuration == c; }))
      folds.push_back({c, {}, {}});
  for (EngineFold& fold : folds)
    for (std::size_t i = 0; i < configurations.size(); ++i)
      (configurations[i] == fold.configuration ? fold.held_out : fold.training).push_back(i);
  return folds;
}

std::string retiming_table_json(const RowRun& row, const std::string& tables_dir) {
  const Scenario& scenario = row.scenario;
  const int layers = scenario.model.layers;
  const double request_seconds = scenario.calibration->engine.request_seconds;
  const RetimingTable table = row.pools ? pools_table(*row.pools, layers, request_seconds)
                                        : server_table(*row.server, layers, request_seconds);
  if (!tables_dir.empty()) {
    const fs::path dir = fs::path(tables_dir) / row.run.id;
    fs::create_directories(dir);
    const RunResult& decode = row.pools ? row.pools->decode : *row.server;
    write_steps_csv((dir / "steps.csv").string(), decode);
    write_requests_csv((dir / "requests.csv").string(), decode);
    if (row.pools) write_steps_csv((dir / "prefill_steps.csv").string(), row.pools->prefill);
  }
  Json pools = Json::array();
  for (const auto& pool : table.pools) pools.push_back(steps_json(pool));
  Json requests = Json::array();
  for (const RequestWindows& w : table.requests) requests.push_back(windows_json(w));
  return Json{{"layers", layers},
              {"pools", pools},
              {"ttft_pool", table.ttft_pool},
              {"tpot_pool", table.tpot_pool},
              {"requests", requests}}
      .dump();
}

RetimingTable retiming_table_from_json(const std::string& text) {
  const Json j = Json::parse(text);
  RetimingTable table;
  const int layers = j.at("layers").get<int>();
  for (const Json& pool : j.at("pools")) {
    auto& steps = table.pools.emplace_back();
    for (const Json& s : pool)
      steps.push_back(
          {s[0].get<double>(), {s[1].get<int>(), s[2].get<int>() != 0, layers, s[3].get<int>() != 0}});
  }
  table.ttft_pool = j.at("ttft_pool").get<int>();
  table.tpot_pool = j.at("tpot_pool").get<int>();
  for (const Json& r : j.at("requests"))
    table.requests.push_back({r[0].get<int>(), r[1].get<int>(), r[2].get<double>(), r[3].get<int>(),
                              r[4].get<int>(), r[5].get<double>(), r[6].get<int>()});
  return table;
}

std::string engine_runs_folder(const std::string& profile) {
  const fs::path path(profile);
  return (path.parent_path() / (path.stem().string() + "-runs")).string();
}

EngineCalibration calibrate_engine(const std::vector<MeasuredServingRun>& runs,
                                   const EngineCalibrationOptions& options) {
  const auto measured = CalibrationProfile::measured(options.device);
  if (!measured)
    throw InputError(fmt::format("--device {}: no measured profile is embedded for it", options.device.name));
  const fs::path runs_dir = engine_runs_folder(options.out);
  fs::create_directories(runs_dir / "folds");

  EngineCalibration calibration;
  calibration.start = measured->engine;
  ValidationOptions base;
  base.jobs = options.jobs;
  base.progress = options.progress;
  const std::string tables_dir = (runs_dir / "tables").string();
  base.details = [tables_dir](const RowRun& row) { return retiming_table_json(row, tables_dir); };
  const std::vector<SimulatedRow> simulated = simulate_serving_runs(runs, base);

  std::vector<RetimingTable> tables;
  std::vector<std::size_t> fitted;  // rows in the fit, as indices into calibration.rows
  std::vector<std::string> configurations;
  for (const SimulatedRow& s : simulated) {
    CalibratedRow& row = calibration.rows.emplace_back();
    row.run = s.run;
    row.configuration = configuration_of(s.run);
    row.skipped = s.skipped;
    if (!s.skipped.empty()) continue;
    if (!s.tpot_ms) {
      row.skipped = "the run has no TPOT (one output token)";
      continue;
    }
    row.default_ttft_ms = *s.ttft_ms;
    row.default_tpot_ms = *s.tpot_ms;
    RetimingTable& table = tables.emplace_back(retiming_table_from_json(s.details));
    table.measured_ttft_s = s.run.ttft_ms * 1e-3;
    table.measured_tpot_s = s.run.tpot_ms * 1e-3;
    fitted.push_back(calibration.rows.size() - 1);
    configurations.push_back(row.configuration);
  }
  if (fitted.empty())
    throw InputError("calibrate engine: no row could be simulated (engine-fit.md says why)");
  const auto tables_at = [&](const std::vector<std::size_t>& indices) {
    std::vector<const RetimingTable*> chosen;
    for (const std::size_t i : indices) chosen.push_back(&tables[i]);
    return chosen;
  };
  std::vector<std::size_t> every(fitted.size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = i;
  calibration.all = fit_engine_costs(tables_at(every), calibration.start);

  calibration.folds = leave_one_configuration_out(configurations);
  for (std::size_t f = 0; f < calibration.folds.size(); ++f) {
    EngineFold& fold = calibration.folds[f];
    std::optional<EngineFit>& fit = calibration.fold_fits.emplace_back();
    if (!fold.training.empty()) {
      fit = fit_engine_costs(tables_at(fold.training), calibration.start);
      std::vector<MeasuredServingRun> held_out;
      for (const std::size_t i : fold.held_out) {
        CalibratedRow& row = calibration.rows[fitted[i]];
        const RetimedMeans retimed = retime(tables[i], fit->costs);
        row.retimed_ttft_ms = retimed.ttft_s * 1e3;
        row.retimed_tpot_ms = retimed.tpot_s * 1e3;
        held_out.push_back(row.run);
      }
      // Checked for real: the held-out rows simulated again with the fold's costs.
      const fs::path profile = fs::absolute(runs_dir / "folds" / fmt::format("fold-{}.yaml", f + 1));
      write_profile(profile, options.device, fit->costs);
      ValidationOptions again;
      again.jobs = options.jobs;
      again.engine_profile = profile.lexically_normal().string();
      const std::vector<SimulatedRow> rerun = simulate_serving_runs(held_out, again);
      for (std::size_t k = 0; k < rerun.size(); ++k) {
        CalibratedRow& row = calibration.rows[fitted[fold.held_out[k]]];
        row.simulated_ttft_ms = rerun[k].ttft_ms;
        row.simulated_tpot_ms = rerun[k].tpot_ms;
      }
    }
    // The report indexes rows: the fold's indices from the fitted rows to all rows.
    for (auto* indices : {&fold.held_out, &fold.training})
      for (std::size_t& i : *indices) i = fitted[i];
  }
  write_profile(options.profile_file, options.device, calibration.all.costs);
  write_text_file(options.report_file, engine_fit_markdown(calibration, options));
  return calibration;
}

std::string engine_fit_markdown(const EngineCalibration& c, const EngineCalibrationOptions& options) {
  std::string md = fmt::format(
      "# Engine costs of {} fitted to {}\n\n"
      "`semsim calibrate engine`: each row simulated once with the measured profile's engine costs, its "
      "steps re-timed for candidate costs (calibrate/README.md, \"Fitting the engine costs\"); "
      "leave-one-configuration-out: each configuration's rows predicted by costs fitted on the others, "
      "then simulated again with them. Kernel timings are the measured profile's, never fitted.\n\n"
      "## Fitted costs (µs)\n\n| cost | meaning | start | all rows | bound |\n|---|---|---:|---:|---|\n",
      options.device.name, options.runs_csv);
  const EngineCostVector start = to_vector(c.start), all = to_vector(c.all.costs);
  for (int i = 0; i < kEngineCostCount; ++i)
    md += fmt::format("| {} | {} | {} | {} | {} |\n", kCostMeanings[i][0], kCostMeanings[i][1],
                      cost_us(start[i]), cost_us(all[i]), bound_hit(i, all[i]));
  md += fmt::format("\nAll rows: loss {:.4g} (sum of |log(pred/measured)|, TTFT and TPOT), {} evaluations.\n",
                    c.all.loss, c.all.evaluations);

  md += "\n## Per fold (costs fitted without the configuration, µs)\n\n| held out | rows |";
  for (const auto& meaning : kCostMeanings) md += fmt::format(" {} |", meaning[0]);
  md += " bounds hit |\n|---|---:|";
  for (int i = 0; i < kEngineCostCount; ++i) md += "---:|";
  md += "---|\n";
  for (std::size_t f = 0; f < c.folds.size(); ++f) {
    md += fmt::format("| {} | {} |", c.folds[f].configuration, c.folds[f].held_out.size());
    if (!c.fold_fits[f]) {
      for (int i = 0; i < kEngineCostCount; ++i) md += " - |";
      md += " nothing left to train on |\n";
      continue;
    }
    const EngineCostVector v = to_vector(c.fold_fits[f]->costs);
    std::string bounds;
    for (int i = 0; i < kEngineCostCount; ++i) {
      md += fmt::format(" {} |", cost_us(v[i]));
      if (!bound_hit(i, v[i]).empty())
        bounds += fmt::format("{}{} {}", bounds.empty() ? "" : "; ", kCostMeanings[i][0], bound_hit(i, v[i]));
    }
    md += fmt::format(" {} |\n", bounds);
  }

  md +=
      "\n## Held-out errors per configuration (|error|, simulated again with the fold's costs; "
      "re-timed in brackets)\n\n| configuration | rows | TTFT median | TTFT p90 | TPOT median | TPOT p90 |\n"
      "|---|---:|---:|---:|---:|---:|\n";
  for (const EngineFold& fold : c.folds) {
    std::vector<double> ttft, tpot, ttft_retimed, tpot_retimed;
    for (const std::size_t i : fold.held_out) {
      const CalibratedRow& r = c.rows[i];
      if (r.simulated_ttft_ms) ttft.push_back(std::abs(relative_error(*r.simulated_ttft_ms, r.run.ttft_ms)));
      if (r.simulated_tpot_ms) tpot.push_back(std::abs(relative_error(*r.simulated_tpot_ms, r.run.tpot_ms)));
      if (r.retimed_ttft_ms)
        ttft_retimed.push_back(std::abs(relative_error(*r.retimed_ttft_ms, r.run.ttft_ms)));
      if (r.retimed_tpot_ms)
        tpot_retimed.push_back(std::abs(relative_error(*r.retimed_tpot_ms, r.run.tpot_ms)));
    }
    const auto stat = [](const std::vector<double>& sim, const std::vector<double>& re, double q) {
      if (sim.empty() && re.empty()) return std::string("-");
      return fmt::format("{} ({})", sim.empty() ? "-" : fmt::format("{:.1f}%", 100 * percentile(sim, q)),
                         re.empty() ? "-" : fmt::format("{:.1f}%", 100 * percentile(re, q)));
    };
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", fold.configuration, fold.held_out.size(),
                      stat(ttft, ttft_retimed, 50), stat(ttft, ttft_retimed, 90),
                      stat(tpot, tpot_retimed, 50), stat(tpot, tpot_retimed, 90));
  }

  md +=
      "\n## Rows (ms; re-timed and simulated with the row's fold's costs; default: the measured "
      "profile's costs)\n\n| id | configuration | TTFT measured | default | re-timed | simulated | error | "
      "TPOT measured | default | re-timed | simulated | error "
      "|\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  std::string skipped;
  for (const CalibratedRow& r : c.rows) {
    if (!r.skipped.empty()) {
      skipped += fmt::format("- {}: {}\n", r.run.id, r.skipped);
      continue;
    }
    md += fmt::format("| {} | {} | {:.2f} | {:.2f} | {} | {} | {} | {:.2f} | {:.2f} | {} | {} | {} |\n",
                      r.run.id, r.configuration, r.run.ttft_ms, r.default_ttft_ms,
                      optional_ms(r.retimed_ttft_ms), optional_ms(r.simulated_ttft_ms),
                      error_text(r.simulated_ttft_ms, r.run.ttft_ms), r.run.tpot_ms, r.default_tpot_ms,
                      optional_ms(r.retimed_tpot_ms), optional_ms(r.simulated_tpot_ms),
                      error_text(r.simulated_tpot_ms, r.run.tpot_ms));
  }
  if (!skipped.empty()) md += "\n## Skipped rows\n\n" + skipped;
  return md;
}

}  // namespace semsim
