#pragma once
// Runs the points of a sweep, each simulation in its own process, N at a time, into an output
// folder that survives being killed: DIR/points.csv (see sim/outputs/points_csv.hpp) and
// DIR/points/ID/ with each point's run outputs. Running again skips the points already in points.csv.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/runs/progress.hpp"
#include "sim/runs/sweep_file.hpp"

namespace semsim {

// A deterministic 1/count of the points: those whose expansion index is `index` modulo `count`
// (interleaved, so every shard gets a share of the light and the heavy points).
struct SweepShard {
  int index = 0;
  int count = 1;
  static SweepShard parse(const std::string& text);  // "i/n" with 0 <= i < n
  bool contains(std::size_t point_index) const {
    return point_index % static_cast<std::size_t>(count) == static_cast<std::size_t>(index);
  }
};

struct SweepOptions {
  std::string out_dir;
  int jobs = 1;  // simulations at once
  SweepShard shard;
  bool retry_failed = false;  // run again the points recorded as failed
  bool force = false;         // a folder holding points this sweep does not have as recorded: remove those
  double point_timeout = 0;   // wall-clock seconds a point may run before it is killed and failed; 0: none
  ProgressMode progress = ProgressMode::kAuto;
};

struct SweepOutcome {
  std::size_t points = 0;        // in this shard
  std::size_t already_done = 0;  // skipped: recorded by an earlier run
  std::size_t ran = 0;
  std::size_t failed = 0;  // of all the shard's recorded points
};

SweepOutcome run_sweep(const Sweep& sweep, const SweepOptions& options);

// Combines the output folders of shards of `sweep` into `out_dir`: points.csv in expansion order
// (byte-identical to what an unsharded run writes) and each point's folder. Throws InputError when
// a point is in two shards or the shards' columns differ. Returns how many points were found.
std::size_t merge_sweep(const Sweep& sweep, const std::string& out_dir,
                        const std::vector<std::string>& shard_dirs);

}  // namespace semsim
