#pragma once
// A multi-process calibration's raw folder as semsim-calibrate-bench writes it under a launcher
// (raw/rank-R/environment.csv, checks.csv, collectives.csv), from synthetic collectives whose
// alpha, bus bandwidth and bandwidth-efficiency curve are known, for the merge, the scale-out fits
// and `semsim calibrate --from-raw` to recover.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "tests/calibrate/table_fixtures.hpp"

namespace semsim::test {

struct CollectiveLaw {
  double alpha = 0;
  double bus_bandwidth = 0;
  double knee = 0;  // message bytes at which half of the small-message loss is made up
  // Bandwidth efficiency by message size: 0.3 at tiny messages, 1 at large ones.
  double factor(double message_bytes) const { return 0.3 + 0.7 / (1 + std::pow(knee / message_bytes, 1.5)); }
  double seconds(double bus_bytes, double message_bytes) const {
    return alpha + bus_bytes / (bus_bandwidth * factor(message_bytes));
  }
};

// Scale-out laws of the fixture, against the H200 preset's 50 GB/s NIC and 450 GB/s NVLink.
inline const CollectiveLaw kScaleUpAllToAll{20e-6, 0.8 * 450e9, 65536};
inline const CollectiveLaw kScaleOutAllToAll{35e-6, 0.7 * 50e9, 262144};
inline const CollectiveLaw kScaleOutAllGather{25e-6, 0.75 * 50e9, 131072};
inline const CollectiveLaw kSameRail{8e-6, 0.9 * 50e9, 32768};
inline const CollectiveLaw kCrossRail{12e-6, 0.6 * 50e9, 32768};
// The slowest rank of every collective takes this much longer than the law (the merge keeps it).
inline constexpr double kSlowestRankExtra = 0.02;

struct MultiRankRaw {
  int nodes = 2;
  int gpus_per_node = 8;
  std::string run = "4242.0";
  // Message sizes, per rank buffer: 1 KiB * 4^k up to 1 GiB (held out of it: 2 KiB * 4^k).
  double first_bytes = 1024;
  double step = 4;
};

inline std::string rank_environment(const MultiRankRaw& raw, int rank) {
  return fmt::format(
      "key,value\ndate,2025-03-04T05:06:07Z\ngpu,NVIDIA H200\ngpus,{}\ndriver,580.82.07\ncuda,13.0.0\n"
      "cublas,13.1.0\nnccl,2.28.9\nrank,{}\nranks,{}\nlocal_rank,{}\nlocal_ranks,{}\nnode,{}\nhost,gpu-node-{"
      "}\n"
      "run,{}\nnics,{}\nlauncher,Slurm\n",
      raw.gpus_per_node, rank, raw.nodes * raw.gpus_per_node, rank % raw.gpus_per_node, raw.gpus_per_node,
      rank / raw.gpus_per_node, rank / raw.gpus_per_node, raw.run, raw.gpus_per_node);
}

inline const char* kCollectiveHeader =
    "collective,ranks,level,pair,bytes,message_bytes,bus_bytes,seconds,algbw,busbw,iterations,status\n";

// One row of a rank's collectives.csv, at `law`'s time (slower on the slowest rank).
inline std::string collective_row(const std::string& collective, int ranks, const std::string& level,
                                  const std::string& pair, double bytes, double message, double bus,
                                  const CollectiveLaw& law, bool slowest) {
  const double seconds = law.seconds(bus, message) * (slowest ? 1 + kSlowestRankExtra : 1);
  return fmt::format("{},{},{},{},{},{},{},{},{},{},10,ok\n", collective, ranks, level, pair, bytes, message,
                     bus, seconds, bytes / seconds, bus / seconds);
}

// Writes raw/rank-R/ for every rank. Rank n-1 is the slowest of every collective it joins.
inline void write_multi_rank_raw(const std::string& dir, const MultiRankRaw& raw = {}) {
  const int ranks = raw.nodes * raw.gpus_per_node, g = raw.gpus_per_node;
  for (int rank = 0; rank < ranks; ++rank) {
    const std::string folder = dir + "/rank-" + std::to_string(rank);
    std::filesystem::create_directories(folder);
    write_text(folder + "/environment.csv", rank_environment(raw, rank));
    write_text(
        folder + "/checks.csv",
        fmt::format("check,max_error,tolerance,passed,note\nall_to_all scaleout x{} data,0,0,true,rank {}\n",
                    ranks, rank));
    std::string rows = kCollectiveHeader;
    const bool slowest = rank == ranks - 1;
    for (double bytes = raw.first_bytes; bytes <= (1 << 30); bytes *= raw.step) {
      if (rank < g) {  // node 0's GPUs alone: scale-up
        const double message = bytes / g;
        rows += collective_row("all_to_all", g, "scaleup", "", bytes, message, message * (g - 1),
                               kScaleUpAllToAll, rank == g - 1);
      }
      // Across every node: the bytes each GPU sends off its node go through its NIC.
      const double message = bytes / ranks;
      rows += collective_row("all_to_all", ranks, "scaleout", "", bytes, message, message * (ranks - g),
                             kScaleOutAllToAll, slowest);
      rows += collective_row("all_gather", ranks, "scaleout", "", bytes, bytes / ranks,
                             bytes * (ranks - 1) / ranks, kScaleOutAllGather, slowest);
      // Point to point between nodes 0 and 1: GPU 0 to GPU 0 (same rail), GPU 0 to GPU 1 (across rails).
      if (rank == 0 || rank == g)
        rows += collective_row("send_recv", 2, "scaleout", "same_rail", bytes, bytes, bytes, kSameRail,
                               rank == g);
      if (rank == 0 || rank == g + 1)
        rows +=
            collective_row("send_recv", 2, "scaleout", "cross_rail", bytes, bytes, bytes, kCrossRail, false);
    }
    write_text(folder + "/collectives.csv", rows);
  }
}

}  // namespace semsim::test
