#include "sim/outputs/live_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "calibrate/fit/quantile.hpp"
#include "calibrate/import/raw_results.hpp"
#include "models/input_error.hpp"
#include "sim/outputs/output_staging.hpp"

namespace semsim {
namespace {

const char* const kLiveFiles[] = {"comparison.csv", "summary.csv", "summary.md", "throughput.csv"};

double simulated_phase(const ExportedStep& step, int rank, const std::string& phase) {
  if (phase == "other") return step.ranks[static_cast<std::size_t>(rank)].other_s;
  double sum = 0;
  for (const ExportedLayer& l : step.layers) {
    const ExportedExperts& e = l.ranks[static_cast<std::size_t>(rank)];
    sum += phase == "attention"  ? e.attention_s
           : phase == "experts"  ? e.experts_s
           : phase == "dispatch" ? l.dispatch_s
                                 : l.combine_s;
  }
  return sum;
}

void compare_run(const LiveRun& run, LiveComparison& out) {
  const StepExport& data = run.exported;
  const RawTable live((std::filesystem::path(run.live_dir) / "steps.csv").string(), true);
  const std::size_t step_column = live.column("step"), rank_column = live.column("rank"),
                    phase_column = live.column("phase"), median_column = live.column("median_us");
  const bool has_launch = live.has_column("launch");  // older replays timed every phase kernel by kernel
  const std::size_t launch_column = has_launch ? live.column("launch") : 0;
  // (step, rank) -> its phases' rows, in the file's order.
  std::map<std::pair<long long, int>, std::vector<PhaseComparison>> measured;
  for (const RawTable::Row& row : live.rows()) {
    const auto fail = [&](const std::string& why) { throw InputError(live.where(row) + ": " + why); };
    const double step_value = live.number(row, step_column), rank_value = live.number(row, rank_column);
    const long long index = std::llround(step_value);
    if (index < data.first_step || index >= data.first_step + static_cast<long long>(data.steps.size()) ||
        static_cast<double>(index) != step_value)
      fail(fmt::format("step {}: not one of the export's steps {}..{}", row.fields[step_column],
                       data.first_step, data.first_step + static_cast<long long>(data.steps.size()) - 1));
    const int rank = static_cast<int>(std::llround(rank_value));
    if (rank < 0 || rank >= data.ranks || static_cast<double>(rank) != rank_value)
      fail(fmt::format("rank {}: not one of the export's {} ranks", row.fields[rank_column], data.ranks));
    const std::string& phase = row.fields[phase_column];
    if (std::none_of(std::begin(kExportedPhases), std::end(kExportedPhases),
                     [&](const char* p) { return phase == p; }))
      fail(fmt::format("phase '{}': not attention, dispatch, experts, combine or other", phase));
    const std::string launch = has_launch ? row.fields[launch_column] : "eager";
    if (launch != "graph" && launch != "eager") fail(fmt::format("launch '{}': not graph or eager", launch));
    ++out.live_phases;
    out.eager_phases += launch == "eager";
    const double live_us = live.number(row, median_column);
    if (!(live_us > 0)) fail(fmt::format("median_us {}: not a positive time", row.fields[median_column]));
    const ExportedStep& step = data.steps[static_cast<std::size_t>(index - data.first_step)];
    auto& phases = measured[{index, rank}];
    if (std::any_of(phases.begin(), phases.end(), [&](const PhaseComparison& c) { return c.phase == phase; }))
      fail(fmt::format("step {} rank {} phase {}: given twice", index, rank, phase));
    phases.push_back({data.rate, index, rank, phase, simulated_phase(step, rank, phase), live_us * 1e-6});
  }
  if (measured.empty()) throw InputError(run.live_dir + "/steps.csv: no rows");
  RateThroughput throughput{data.rate, 0, 0, 0, 0, 0, data.ranks, ""};
  std::set<int> replayed;
  std::set<std::string> phases_seen;
  for (const auto& [key, phases] : measured) {
    replayed.insert(key.second);
    for (const PhaseComparison& c : phases) phases_seen.insert(c.phase);
  }
  throughput.replayed_ranks = static_cast<int>(replayed.size());
  for (const char* phase : kExportedPhases)
    if (phases_seen.count(phase))
      throughput.phases += std::string(throughput.phases.empty() ? "" : "+") + phase;
  std::map<long long, std::pair<double, double>> slowest;  // step -> (sim, live) of its slowest rank
  for (const auto& [key, phases] : measured) {
    PhaseComparison step{data.rate, key.first, key.second, "step", 0, 0};
    for (const PhaseComparison& c : phases) {
      out.rows.push_back(c);
      step.sim_s += c.sim_s;
      step.live_s += c.live_s;
    }
    out.rows.push_back(step);
    auto& [sim, measured_s] = slowest[key.first];
    sim = std::max(sim, step.sim_s);
    measured_s = std::max(measured_s, step.live_s);
  }
  for (const auto& [index, times] : slowest) {
    ++throughput.steps;
    for (const ExportedRank& r : data.steps[static_cast<std::size_t>(index - data.first_step)].ranks)
      throughput.tokens += r.tokens();
    throughput.sim_s += times.first;
    throughput.live_s += times.second;
  }
  out.throughput.push_back(throughput);
}

}  // namespace

bool RateThroughput::whole_steps() const {
  return replayed_ranks == ranks && phases == "attention+dispatch+experts+combine+other";
}

LiveComparison compare_live(const std::vector<LiveRun>& runs) {
  LiveComparison out;
  for (const LiveRun& run : runs) compare_run(run, out);
  std::vector<std::string> phases(std::begin(kExportedPhases), std::end(kExportedPhases));
  phases.emplace_back("step");
  for (const std::string& phase : phases) {
    std::vector<double> errors;
    for (const PhaseComparison& c : out.rows)
      if (c.phase == phase) errors.push_back(std::abs(c.relative_error()));
    if (errors.empty()) continue;
    std::sort(errors.begin(), errors.end());
    out.summary.push_back(
        {phase, static_cast<int>(errors.size()), sorted_quantile(errors, 0.5), sorted_quantile(errors, 0.9)});
  }
  std::stable_sort(out.throughput.begin(), out.throughput.end(),
                   [](const RateThroughput& a, const RateThroughput& b) { return a.rate < b.rate; });
  return out;
}

OutputFolderContents live_comparison_folder_contents() {
  return {[](const std::string& name) {
            return std::find(std::begin(kLiveFiles), std::end(kLiveFiles), name) != std::end(kLiveFiles);
          },
          {"plots"}};
}

void write_live_comparison(const LiveComparison& comparison, OutputStaging& staging) {
  std::string rows = "rate,step,rank,phase,sim_us,live_us,relative_error\n";
  for (const PhaseComparison& c : comparison.rows)
    rows += fmt::format("{},{},{},{},{:.9g},{:.9g},{:.6g}\n", c.rate, c.step, c.rank, c.phase, c.sim_s * 1e6,
                        c.live_s * 1e6, c.relative_error());
  write_text_file(staging.staged("comparison.csv"), rows);
  std::string csv = "phase,rows,median_abs_relative_error,p90_abs_relative_error\n";
  std::string md =
      "| phase | rows | median abs. relative error | p90 abs. relative error |\n|---|---:|---:|---:|\n";
  for (const ErrorSummary& s : comparison.summary) {
    csv += fmt::format("{},{},{:.6g},{:.6g}\n", s.phase, s.rows, s.median, s.p90);
    md += fmt::format("| {} | {} | {:.1f}% | {:.1f}% |\n", s.phase, s.rows, 100 * s.median, 100 * s.p90);
  }
  if (comparison.eager_phases > 0)
    md += fmt::format(
        "\nMixed: {} of {} live phase times were timed kernel by kernel (their CUDA graph could not be "
        "captured), so they hold the host's launch gaps.\n",
        comparison.eager_phases, comparison.live_phases);
  for (const RateThroughput& t : comparison.throughput)
    if (!t.whole_steps())
      md += fmt::format(
          "\nPartial at rate {}: the replay covered {} of {} ranks and the phases {}; the step rows and "
          "throughput.csv are over those alone, not whole steps.\n",
          t.rate, t.replayed_ranks, t.ranks, t.phases);
  write_text_file(staging.staged("summary.csv"), csv);
  write_text_file(staging.staged("summary.md"), md);
  std::string throughput =
      "rate,steps,tokens,sim_s,live_s,sim_tokens_per_s,live_tokens_per_s,replayed_ranks,ranks,phases\n";
  for (const RateThroughput& t : comparison.throughput)
    throughput += fmt::format("{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{}\n", t.rate, t.steps, t.tokens,
                              t.sim_s, t.live_s, static_cast<double>(t.tokens) / t.sim_s,
                              static_cast<double>(t.tokens) / t.live_s, t.replayed_ranks, t.ranks, t.phases);
  write_text_file(staging.staged("throughput.csv"), throughput);
  staging.commit();
}

}  // namespace semsim
