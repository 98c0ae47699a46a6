// `semsim plot` (scripts/plot-sweep) on a hand-made sweep folder (tests/data/plot-fixture): every
// figure as PNG and SVG, and each series' SLO-attaining rate (highest swept rate meeting the SLO),
// marked "≥" when the highest swept rate still meets it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

const std::string kFixture = std::string(SEMSIM_SOURCE_DIR) + "/tests/data/plot-fixture";

bool matplotlib_installed() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0 ||
         std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

TEST(cliPlot, WritesEveryFigureAsPngAndSvgAndTheSloAttainingRates) {
  if (!matplotlib_installed())
    GTEST_SKIP() << "python3-matplotlib is not installed (scripts/bootstrap installs it)";
  TempDir tmp;
  const std::vector<std::string> args{"plot", kFixture, "--out", tmp / "plots"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);

  std::vector<std::string> expected{"slo_rate.csv"};
  for (const char* figure : {"throughput_vs_rate", "latency_vs_rate", "ttft_cdf", "tpot_cdf", "e2e_cdf",
                             "lar_by_series", "a2a_bytes_by_series", "layer_breakdown_a",
                             "imbalance_heatmap_a", "layer_breakdown_b", "imbalance_heatmap_b"})
    for (const char* ext : {".png", ".svg"}) expected.push_back(std::string(figure) + ext);
  std::vector<std::string> written = entries_under(tmp / "plots");
  std::sort(expected.begin(), expected.end());
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, expected);
  for (const std::string& name : written) {
    const std::string content = read_file(fs::path(tmp / "plots") / name);
    if (name.ends_with(".png")) {
      EXPECT_TRUE(content.starts_with("\x89PNG\r\n")) << name;
    } else if (name.ends_with(".svg")) {
      EXPECT_NE(content.find("<svg"), std::string::npos) << name;
    }
    EXPECT_NE(r.out.find(name), std::string::npos) << name << " not listed in:\n" << r.out;
  }
  // SLO = 5 x 1.0 s (series a at the lightest rate); a meets it up to 2 req/s, b only at 1 req/s,
  // c at every swept rate: at least 4 req/s.
  EXPECT_EQ(read_file(fs::path(tmp / "plots") / "slo_rate.csv"),
            "series,slo_metric,slo_s,max_rate_meeting_slo_req_s,censored,throughput_tok_s_at_that_rate\n"
            "a,e2e_s.p99,5,2,0,200\n"
            "b,e2e_s.p99,5,1,0,90\n"
            "c,e2e_s.p99,5,4,1,320\n");
  const std::string curves = read_file(fs::path(tmp / "plots") / "throughput_vs_rate.svg");
  EXPECT_NE(curves.find("a (SLO met up to 2 req/s)"), std::string::npos);
  EXPECT_NE(curves.find("c (SLO met up to \u2265 4 req/s)"), std::string::npos);
}

TEST(cliPlot, AFolderWithoutPointsCsvExits2) {
  TempDir tmp;
  const CliResult r = run_semsim({"plot", tmp / "nothing"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no points.csv here"), std::string::npos) << r.err;
}

// A column points.csv lacks (ttft.p99 for ttft_s.p99) is bad input: one line listing the latency
// columns there are, exit 2 (it was a Python traceback), and checked before matplotlib is needed.
TEST(cliPlot, AnSloMetricOrRateColumnNotInPointsCsvExits2NamingTheColumnsThereAre) {
  TempDir tmp;
  const std::vector<std::string> metric{"plot", kFixture, "--slo-metric", "ttft.p99", "--out", tmp / "plots"};
  const CliResult r = run_semsim(metric);
  EXPECT_EQ(r.exit_code, 2) << describe(metric, r);
  EXPECT_EQ(r.err, "error: --slo-metric 'ttft.p99': " + kFixture +
                       "/points.csv has no such column; latency columns: e2e_s.p99\n");
  const std::vector<std::string> rate{"plot", kFixture, "--rate-column", "rate", "--out", tmp / "plots"};
  const CliResult q = run_semsim(rate);
  EXPECT_EQ(q.exit_code, 2) << describe(rate, q);
  EXPECT_NE(q.err.find("error: --rate-column 'rate': "), std::string::npos) << q.err;
  EXPECT_FALSE(fs::exists(tmp / "plots"));
}

}  // namespace
}  // namespace semsim::cli_test
