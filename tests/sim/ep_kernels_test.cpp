// DeepEP's link model: fit on tables made from a known latency and bandwidth it recovers them, a
// shape left out is left out, too few rows fit nothing; and a group over nodes is priced by it, its
// RDMA bytes at the NICs' calibrated bandwidth. On the tables' group, the tables at the payload's bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "calibrate/fit/kernel_library.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"
#include "sim/ep_kernels.hpp"

namespace semsim {
namespace {

constexpr double kLatency = 25e-6, kBandwidth = 150e9;

// A table of `kernel` at `shape` whose seconds are kLatency + a rank's bytes / kBandwidth, the bytes
// counted as fit_deepep_link_model counts them (dispatch: FP8 payload; per-expert copies for LL).
KernelTable link_table(const std::string& kernel, int hidden, int experts, int top_k,
                       const std::string& suffix, double latency = kLatency) {
  KernelTable t;
  t.kernel = kernel;
  t.shape = "hidden=" + std::to_string(hidden) + " experts=" + std::to_string(experts) +
            " top_k=" + std::to_string(top_k) + suffix;
  t.implementation = "deepep";
  t.axes = {{"tokens", {1, 16, 256, 4096}}};
  const double copies = top_k * 7.0 / 8;  // low-latency: per expert
  for (const double tokens : t.axes[0].values)
    t.seconds.push_back(latency + tokens * copies * hidden * (1 + 4.0 / 128) / kBandwidth);
  return t;
}

TEST(DeepepLinkModel, RecoversTheLatencyAndBandwidthOfItsTables) {
  CalibrationProfile p;
  p.kernels = {link_table("deepep_ll_dispatch", 2048, 128, 8, ""),
               link_table("deepep_ll_dispatch", 4096, 256, 8, "")};
  const auto link = fit_deepep_link_model(p, "deepep_ll_dispatch", 0);
  ASSERT_TRUE(link);
  EXPECT_NEAR(link->latency, kLatency, 1e-9);
  EXPECT_NEAR(link->bandwidth / kBandwidth, 1.0, 1e-9);
  EXPECT_EQ(link->samples, 8);
  // The shape left out is not fitted: a table of another latency there changes nothing.
  p.kernels.push_back(link_table("deepep_ll_dispatch", 7168, 256, 8, "", 90e-6));
  const auto without = fit_deepep_link_model(p, "deepep_ll_dispatch", 0, "hidden=7168 experts=256 top_k=8");
  ASSERT_TRUE(without);
  EXPECT_NEAR(without->latency, kLatency, 1e-9);
  EXPECT_EQ(without->samples, 8);
  const auto with = fit_deepep_link_model(p, "deepep_ll_dispatch", 0);
  EXPECT_GT(with->latency, kLatency);
  // Normal kernels fit at their SMs only; nothing below four rows.
  p.kernels = {link_table("deepep_normal_dispatch", 2048, 128, 8, " sms=24")};
  EXPECT_TRUE(fit_deepep_link_model(p, "deepep_normal_dispatch", 24));
  EXPECT_FALSE(fit_deepep_link_model(p, "deepep_normal_dispatch", 20));
  p.kernels.front().seconds.resize(3);
  p.kernels.front().axes[0].values.resize(3);
  EXPECT_FALSE(fit_deepep_link_model(p, "deepep_normal_dispatch", 24));
}

// Kernels that also pay a fixed cost per token copy (their SMs' work per message, whatever its size):
// over tables of two hidden sizes the fit tells it from the bytes and recovers all three terms, and
// prices a shape of a third hidden size left out exactly. Rows of one hidden size, whose copies and
// bytes grow in one ratio, cannot tell the two apart: their fit is latency and bandwidth alone (the
// model before the per-copy term), which misses that shape by over 10 % at its largest load.
TEST(DeepepLinkModel, RecoversAPerCopyCostAcrossHiddenSizes) {
  constexpr double kPerCopy = 40e-9;
  const auto table = [&](int hidden) {
    KernelTable t = link_table("deepep_ll_dispatch", hidden, 256, 8, "");
    for (std::size_t i = 0; i < t.seconds.size(); ++i)
      *t.seconds[i] += t.axes[0].values[i] * 8 * 7.0 / 8 * kPerCopy;
    return t;
  };
  CalibrationProfile p;
  p.kernels = {table(2048), table(7168)};
  const auto link = fit_deepep_link_model(p, "deepep_ll_dispatch", 0);
  ASSERT_TRUE(link);
  EXPECT_NEAR(link->latency / kLatency, 1.0, 1e-6);
  EXPECT_NEAR(link->per_copy / kPerCopy, 1.0, 1e-6);
  EXPECT_NEAR(link->bandwidth / kBandwidth, 1.0, 1e-6);
  const KernelTable held_out = table(4096);
  const double tokens = held_out.axes[0].values.back(), copies = tokens * 8 * 7.0 / 8;
  const double bytes = copies * 4096 * (1 + 4.0 / 128);
  const double truth = *held_out.seconds.back();
  EXPECT_NEAR((link->latency + copies * link->per_copy + bytes / link->bandwidth) / truth, 1.0, 1e-6);
  // One hidden size: copies and bytes in one ratio, no per-copy cost to tell apart.
  p.kernels = {table(2048)};
  const auto alone = fit_deepep_link_model(p, "deepep_ll_dispatch", 0);
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->per_copy, 0.0);
  EXPECT_GT(std::abs((alone->latency + bytes / alone->bandwidth) / truth - 1), 0.1);
}

TEST(DeepepLinkModel, PricesAGroupOverNodesWithRdmaAtTheNicsBandwidth) {
  CalibrationProfile p;
  for (const char* kernel : {"deepep_ll_dispatch", "deepep_ll_combine"})
    p.kernels.push_back(link_table(kernel, 2048, 128, 8, ""));
  p.scaleout_efficiency = 0.8;
  const Cluster cluster = cluster_preset("h200-2x8");  // 50 GB/s NICs: 40 GB/s at 0.8
  MoeModel model = model_preset("deepseek-v2-lite");
  const KernelLibrary library(p, cluster.device, false);
  std::string why_not;
  const auto times =
      DeepepTimes::make(library, p, model, cluster, 16, DispatchMode::kLowLatency, {}, why_not);
  ASSERT_TRUE(times) << why_not;
  EXPECT_NE(times->description().find("link model"), std::string::npos) << times->description();
  std::vector<long long> copies(16 * 16, 0);
  copies[0 * 16 + 1] = 1000;  // NVLink: 1000 copies
  copies[0 * 16 + 8] = 100;   // RDMA: 100 copies
  const double bytes = 4096;
  const double nvlink = 1000 * bytes / kBandwidth, rdma = 100 * bytes / 40e9;
  // The combine moves the same copies back, at its own link model's rate: here half the bytes.
  const auto combine = fit_deepep_link_model(p, "deepep_ll_combine", 0);
  ASSERT_TRUE(combine);
  const double combine_rdma = std::min(combine->bandwidth, 40e9);
  ExchangeSeconds both =
      times->seconds(EpKernel::kLowLatency, copies, DispatchMode::kLowLatency, bytes, bytes / 2);
  EXPECT_NEAR(both.dispatch, kLatency + std::max(nvlink, rdma), 1e-12);
  EXPECT_NEAR(
      both.combine,
      combine->latency + std::max(1000 * bytes / 2 / combine->bandwidth, 100 * bytes / 2 / combine_rdma),
      1e-12);
  copies[0 * 16 + 8] = 1000;
  both = times->seconds(EpKernel::kLowLatency, copies, DispatchMode::kLowLatency, bytes, bytes);
  EXPECT_NEAR(both.dispatch, kLatency + 1000 * bytes / 40e9, 1e-12);
  EXPECT_NEAR(both.combine, combine->latency + 1000 * bytes / combine_rdma, 1e-12);
  std::fill(copies.begin(), copies.end(), 0);
  both = times->seconds(EpKernel::kLowLatency, copies, DispatchMode::kLowLatency, bytes, bytes);
  EXPECT_EQ(both.dispatch, 0.0);
  EXPECT_EQ(both.combine, 0.0);
}

// On the tables' own group the measured kernel is read at the tokens that move as many bytes as the
// payload: the tables send FP8 (block-scaled) dispatch tokens and BF16 combine ones, so an NVFP4
// dispatch takes the time of fewer tokens and a BF16 one of more.
TEST(DeepepTables, AreReadAtTheTokensThatMoveAsManyBytesAsThePayload) {
  CalibrationProfile p;
  for (const char* kernel : {"deepep_ll_dispatch", "deepep_ll_combine"}) {
    p.kernels.push_back(link_table(kernel, 2048, 64, 6, ""));
    p.kernels.back().dtype = "bf16";
  }
  const Cluster cluster = cluster_preset("h200-1x8");
  const MoeModel model = model_preset("deepseek-v2-lite");  // hidden 2048, 64 experts, top-6
  const KernelLibrary library(p, cluster.device, false);
  std::string why_not;
  const auto times = DeepepTimes::make(library, p, model, cluster, 8, DispatchMode::kLowLatency, {}, why_not);
  ASSERT_TRUE(times) << why_not;
  EXPECT_EQ(times->description().find("link model"), std::string::npos) << times->description();
  std::vector<long long> copies(8 * 8, 0);
  copies[0 * 8 + 1] = 2100;                    // the busiest rank's remote copies
  const double tokens = 2100 / (6 * 7.0 / 8);  // low-latency: per-expert copies per token
  const std::string shape = "hidden=2048 experts=64 top_k=6";
  const auto dispatch = library.curve("deepep_ll_dispatch", shape, "bf16");
  const auto combine = library.curve("deepep_ll_combine", shape, "bf16");
  ASSERT_TRUE(dispatch && combine);
  for (const double bytes : {kFp8BlockScaledBytes, kNvfp4Bytes, kBf16Bytes}) {
    const ExchangeSeconds both =
        times->seconds(EpKernel::kLowLatency, copies, DispatchMode::kLowLatency, 2048 * bytes, 2048 * bytes);
    EXPECT_NEAR(both.dispatch, dispatch->seconds(tokens * bytes / kFp8BlockScaledBytes), 1e-12);
    EXPECT_NEAR(both.combine, combine->seconds(tokens * bytes / kBf16Bytes), 1e-12);
  }
}

// A device without DeepEP tables (a datasheet profile) gets the measured H100/H200 kernels' link
// model at its share of SMs — their mean latency, the bandwidth those SMs reached — capped by its own
// calibrated NVLink, never the raw link rate and a 10 us overhead.
TEST(DeepepLinkModel, ADeviceWithoutTablesGetsTheMeasuredKernelsAtItsSmShareCappedByItsLink) {
  double latency = 0, bandwidth = 0;
  for (const char* name : {"h100-sxm", "h200-sxm"}) {
    const Device device =
        load_device(YamlInput(YAML::Node(name), std::make_shared<const std::string>("t"), ""), ".");
    const auto own =
        fit_deepep_link_model(*CalibrationProfile::measured(device), "deepep_normal_dispatch", 24);
    ASSERT_TRUE(own);
    latency += own->latency / 2, bandwidth += own->bandwidth / 2;
  }
  const auto free = transferred_deepep_link_model("deepep_normal_dispatch", 24.0 / 132, 1e15);
  ASSERT_TRUE(free);
  EXPECT_NEAR(free->latency, latency, 1e-12);
  EXPECT_NEAR(free->bandwidth, bandwidth, 1e-3 * bandwidth);
  EXPECT_GT(free->latency, 20e-6);
  // An H800's link (200 GB/s at 0.8) caps what the H100's SMs push; fewer SMs push less.
  const auto h800 = transferred_deepep_link_model("deepep_normal_dispatch", 24.0 / 132, 160e9);
  EXPECT_EQ(h800->bandwidth, std::min(bandwidth, 160e9));
  EXPECT_EQ(h800->latency, free->latency);
  const auto fewer = transferred_deepep_link_model("deepep_normal_dispatch", 12.0 / 132, 1e15);
  EXPECT_LT(fewer->bandwidth, 0.8 * free->bandwidth);
  const auto two = transferred_deepep_link_model("deepep_normal_dispatch", 2.0 / 132, 1e15);
  const auto four = fit_deepep_link_model(
      *CalibrationProfile::measured(
          load_device(YamlInput(YAML::Node("h100-sxm"), std::make_shared<const std::string>("t"), ""), ".")),
      "deepep_normal_dispatch", 4);
  EXPECT_LT(two->bandwidth, four->bandwidth) << "below the least SMs measured: in proportion";
}

}  // namespace
}  // namespace semsim
