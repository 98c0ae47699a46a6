#pragma once
// How the ranks of a multi-node calibration meet and watch each other through a folder every node
// sees (the raw results' folder): rank 0 publishes the NCCL unique id in a file the others wait for,
// and every rank keeps a heartbeat and, when it ends, a status there. Each file starts with the run
// token (launcher.hpp), so a file an earlier run left in the folder is never taken for this run's.
// Pure C++: the microbenchmarks build with it too.
#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace semsim {

// A run that cannot go on: a rank died, hung or failed, or a file never came. The message names
// the rank and its host where one is to blame.
class CalibrationFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using RendezvousClock = std::chrono::steady_clock;

// Writes `contents` whole: to a temporary file beside `path`, then renamed over it, so that a reader
// on any node sees the old file, no file or all of the new one.
void publish_file(const std::string& path, const std::string& contents);

// `payload` under the run token, and the payload back once `path` holds `run`'s (nothing until then).
void publish_run_file(const std::string& path, const std::string& run, const std::string& payload);
std::optional<std::string> read_run_file(const std::string& path, const std::string& run);

// Waits for `path` to hold `run`'s payload, polling every `poll` and calling `while_waiting` (which
// may throw to give up early); a CalibrationFault naming the file after `timeout`.
std::string wait_for_run_file(const std::string& path, const std::string& run,
                              RendezvousClock::duration timeout,
                              RendezvousClock::duration poll = std::chrono::milliseconds(50),
                              const std::function<void()>& while_waiting = {});

// Bytes as lower-case hex and back (an NCCL unique id in a text file); from_hex throws
// CalibrationFault on anything but an even count of hex digits.
std::string to_hex(const void* data, std::size_t bytes);
std::vector<unsigned char> from_hex(const std::string& text);

// The files of a run in the raw results' folder.
std::string rank_folder(const std::string& raw, int rank);  // raw/rank-R: its raw results too
std::string nccl_id_path(const std::string& raw);
std::string abort_path(const std::string& raw);

// A rank's heartbeat: `beats` counts up while the process lives (a thread), `progress` while its
// measurements move (every point measured), `phase` says what it is doing.
void write_heartbeat(const std::string& raw, const std::string& run, int rank, const std::string& host,
                     long long beats, long long progress, const std::string& phase);
// How a rank ended: "ok", or "failed: why".
void write_rank_status(const std::string& raw, const std::string& run, int rank, const std::string& status);
// Any rank may ask every rank to stop; the others see it at their next look.
void request_abort(const std::string& raw, const std::string& run, const std::string& why);
std::optional<std::string> abort_requested(const std::string& raw, const std::string& run);

struct WatchLimits {
  RendezvousClock::duration silent = std::chrono::seconds(60);  // no heartbeat: the process is gone
  RendezvousClock::duration stuck = std::chrono::seconds(300);  // beating, but no point measured: hung
};

// Every rank's heartbeat and status, as one rank (or the launcher-side wrapper) sees them over time.
// Times are the watcher's own clock: nodes' clocks need not agree.
class RunWatch {
 public:
  // `watcher`, a rank that watches the others, is not watched: it reports its own faults.
  RunWatch(std::string raw, std::string run, int ranks, WatchLimits limits, RendezvousClock::time_point start,
           int watcher = -1);

  // Looks at every rank's files at `now`: the first fault (a rank that reported failure, went
  // silent or got stuck; its rank and host named), or nothing.
  std::optional<std::string> fault(RendezvousClock::time_point now);
  // Whether every rank has reported "ok" (as of the last look).
  bool all_finished() const;

 private:
  struct Seen {
    std::string host = "unknown host";
    std::optional<long long> beats, progress;
    std::string phase = "starting";
    RendezvousClock::time_point beat_at, progress_at;
    std::optional<std::string> status;
  };
  std::string raw_, run_;
  WatchLimits limits_;
  int watcher_;
  std::vector<Seen> ranks_;
};

// Waits until every rank has reported "ok"; a CalibrationFault naming the rank and host at the
// first fault or abort request.
void wait_for_ranks(const std::string& raw, const std::string& run, int ranks, WatchLimits limits,
                    RendezvousClock::duration poll = std::chrono::milliseconds(200));

}  // namespace semsim
