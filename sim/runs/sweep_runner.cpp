#include "sim/runs/sweep_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/outputs/points_csv.hpp"
#include "sim/outputs/staged_run.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/runs/progress.hpp"
#include "sim/runs/sweep_points_csv.hpp"

namespace semsim {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

constexpr const char* kFingerprintFile = "sweep.fingerprint";

// One writer per output folder: held for the process's life, released by the kernel however it ends.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& dir) {
    const std::string path = (dir / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(dir.string() + ": cannot create " + path);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw InputError(dir.string() + ": another semsim sweep is writing to this folder");
    }
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// What a sweep folder holds: its points, its fingerprint and lock, and the folders `semsim plot`
// (plots/) and scripts/slurm-sweep (shards/, slurm/) write there. Anything else, a run's outputs
// included, is another command's: refused, as `semsim run` refuses a folder it did not write.
const OutputFolderContents kSweepFolder{[](const std::string& name) {
                                          return name == "points.csv" || name == kFingerprintFile ||
                                                 name == ".lock";
                                        },
                                        {"points", "plots", "shards", "slurm"}};

fs::path prepare_out_dir(const std::string& out_dir) {
  const fs::path out(out_dir);
  try {
    fs::create_directories(out / "points");
  } catch (const fs::filesystem_error& e) {
    throw InputError("--out '" + out_dir + "': cannot create the output folder (" + e.code().message() + ")");
  }
  return out;
}

// done/total, failures and ETA on stderr: redrawn in place on a terminal, a line per point in a log
// (stderr not a terminal, --progress auto or always: never a carriage return), nothing with never.
class Progress {
 public:
  Progress(std::size_t total, std::size_t done, std::size_t failed, ProgressMode mode)
      : total_(total),
        done_(done),
        failed_(failed),
        in_place_(mode != ProgressMode::kNever && ::isatty(STDERR_FILENO) == 1),
        lines_(mode != ProgressMode::kNever && !in_place_) {}

  void point_finished(bool ok) {
    ++done_;
    ++ran_;
    failed_ += ok ? 0 : 1;
    if (lines_) print('\n');
  }
  void tick() {
    if (in_place_) print('\r');
  }
  void close() {
    if (in_place_ && ran_ > 0) std::fputc('\n', stderr);
  }

 private:
  void print(char mode) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const std::string eta =
        ran_ == 0
            ? "--"
            : format_duration(elapsed / static_cast<double>(ran_) * static_cast<double>(total_ - done_));
    const std::string counts = fmt::format("{}/{} done, {} failed, ETA {}", done_, total_, failed_, eta);
    if (mode == '\n') {
      std::fprintf(stderr, "sweep: %s\n", counts.c_str());
    } else {
      constexpr std::size_t kWidth = 30;
      const std::size_t filled = total_ == 0 ? kWidth : kWidth * done_ / total_;
      std::fprintf(stderr, "\r[%s%s] %s   ", std::string(filled, '#').c_str(),
                   std::string(kWidth - filled, '.').c_str(), counts.c_str());
    }
    std::fflush(stderr);
  }

  std::size_t total_, done_, failed_, ran_ = 0;
  bool in_place_, lines_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

// What a run killed mid-way left half-written (its staging folder in a point's folder, a temporary
// copy of points.csv), removed by the next run, which holds the folder's lock.
void remove_leftovers(const fs::path& dir, const std::string& prefix) {
  std::error_code ignored;
  if (!fs::is_directory(dir, ignored)) return;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with(prefix)) fs::remove_all(entry.path(), ignored);
}

bool row_failed(const std::string& row) {
  return split_csv_line(row)[1] != "ok";
}

}  // namespace

SweepShard SweepShard::parse(const std::string& text) {
  SweepShard shard;
  const auto slash = text.find('/');
  const auto index = parse_number(text.substr(0, slash));
  const auto count = slash == std::string::npos ? std::nullopt : parse_number(text.substr(slash + 1));
  if (!index || !count || *index != static_cast<int>(*index) || *count != static_cast<int>(*count) ||
      *count < 1 || *index < 0 || *index >= *count)
    throw InputError("--shard '" + text + "': expected i/n with 0 <= i < n (e.g. 0/4)");
  shard.index = static_cast<int>(*index);
  shard.count = static_cast<int>(*count);
  return shard;
}

namespace {

// The fingerprint of the sweep whose points a folder holds ("" when it records none).
std::string recorded_fingerprint(const fs::path& dir) {
  std::ifstream in(dir / kFingerprintFile);
  std::string fingerprint;
  in >> fingerprint;
  return fingerprint;
}

// The points `out` records that this sweep does not have as it records them: a value edited (which
// changes the point's scenario, so its id), a point removed, or its labels changed. A point added is
// no such change: the sweep extends the folder, and runs only what it lacks. Throws InputError,
// changing nothing, when there are such points and `force` is false (--force removes them), or when
// its points.csv has other columns.
std::vector<std::string> changed_points(const fs::path& out, const Sweep& sweep, bool force) {
  const PointsRows rows = read_points_csv((out / "points.csv").string());
  if (!rows.header.empty() && rows.header != points_header(sweep))
    throw InputError((out / "points.csv").string() +
                     ": written by a sweep with other columns (its axes or this semsim's metrics "
                     "differ); use another --out folder");
  std::map<std::string, const SweepPoint*> points;
  for (const SweepPoint& p : sweep.points) points.emplace(p.id, &p);
  std::vector<std::string> changed;
  for (const std::string& row : rows.rows) {
    const std::vector<std::string> fields = split_csv_line(row);
    const auto point = points.find(fields[0]);
    // Labels as a row holds them (a line break written as "\n").
    if (point == points.end() ||
        !std::equal(
            point->second->labels.begin(), point->second->labels.end(), fields.begin() + 2,
            [](const std::string& label, const std::string& field) { return one_line(label) == field; }))
      changed.push_back(fields[0]);
  }
  if (!changed.empty() && !force)
    throw InputError(fmt::format(
        "--out '{}': holds {} point(s) this sweep does not have as recorded (a value edited, a point removed "
        "or relabelled; first {}): choose another --out, or --force to remove those (the points both share "
        "are kept)",
        out.string(), changed.size(), changed.front()));
  return changed;
}

// Under the folder's lock: removes the points whose meaning changed (--force) and records this sweep.
void claim_out_dir(const fs::path& out, const Sweep& sweep, bool force) {
  if (const std::vector<std::string> changed = changed_points(out, sweep, force); !changed.empty()) {
    const std::string path = (out / "points.csv").string();
    const PointsRows rows = read_points_csv(path);
    std::vector<std::string> kept;
    for (const std::string& row : rows.rows)
      if (std::find(changed.begin(), changed.end(), split_csv_line(row)[0]) == changed.end())
        kept.push_back(row);
    replace_points_csv(path, rows.header, kept);
    for (const std::string& id : changed) fs::remove_all(out / "points" / id);
  }
  write_atomically((out / kFingerprintFile).string(),
                   [&](const std::string& path) { write_text_file(path, sweep.fingerprint + "\n"); });
}

// A point simulating in its child process, its outputs staged in the point's folder.
struct RunningPoint {
  const SweepPoint* point;
  std::unique_ptr<StagedRun> staged;
  IsolatedProcess child;
  std::chrono::steady_clock::time_point started;
};

// Records a finished point: its summary, or null and why it failed.
using RecordPoint =
    std::function<void(const SweepPoint& point, const Json* summary, const std::string& error)>;

// Starts queued points until `jobs` run; a point that is not a valid scenario is recorded at once.
void start_points(std::deque<const SweepPoint*>& queue, std::size_t jobs, const fs::path& out,
                  std::vector<RunningPoint>& running, const RecordPoint& record) {
  while (running.size() < jobs && !queue.empty()) {
    const SweepPoint& p = *queue.front();
    queue.pop_front();
    if (!p.scenario) {
      record(p, nullptr, p.error);
      continue;
    }
    const fs::path dir = out / "points" / p.id;
    remove_leftovers(dir, ".staging-");
    auto staged = std::make_unique<StagedRun>(*p.scenario, dir.string());
    IsolatedProcess child =
        IsolatedProcess::start([run = staged.get()] { return run->simulate_and_write(); });
    running.push_back({&p, std::move(staged), std::move(child), std::chrono::steady_clock::now()});
  }
}

// Waits up to a second for the running points, then records those that finished, and those that
// ran past `point_timeout` (killed).
void record_finished(std::vector<RunningPoint>& running, double point_timeout, const RecordPoint& record) {
  std::vector<pollfd> fds;
  for (const RunningPoint& r : running) fds.push_back({r.child.result_fd(), POLLIN, 0});
  if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) throw std::runtime_error("poll() failed");
  for (std::size_t i = running.size(); i-- > 0;) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - running[i].started).count();
    const bool timed_out = point_timeout > 0 && seconds > point_timeout;
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0 && !timed_out) continue;
    RunningPoint finished = std::move(running[i]);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
      // Destroying the child kills it, and the staged run discards what it had staged.
      record(*finished.point, nullptr,
             fmt::format("timed out: still running after {:g} s (--point-timeout)", point_timeout));
      continue;
    }
    Json summary;
    std::string error;
    try {
      summary = Json::parse(finished.child.wait());
      finished.staged->commit(summary);
    } catch (const std::exception& e) {
      error = e.what();
    }
    record(*finished.point, error.empty() ? &summary : nullptr, error);
  }
}

}  // namespace

SweepOutcome run_sweep(const Sweep& sweep, const SweepOptions& options) {
  // Refused before anything is created.
  check_output_folder("--out", options.out_dir, kSweepFolder, {sweep.file});
  changed_points(options.out_dir, sweep, options.force);
  const fs::path out = prepare_out_dir(options.out_dir);
  const FolderLock lock(out);
  claim_out_dir(out, sweep, options.force);
  PointsCsv table((out / "points.csv").string(), points_header(sweep));
  if (table.torn_rows_dropped() > 0)
    std::fprintf(stderr,
                 "sweep: dropped %zu torn row(s) of points.csv left by an interrupted run; they run again\n",
                 table.torn_rows_dropped());
  if (options.retry_failed) table.drop_failed();

  SweepOutcome outcome;
  std::vector<std::string> shard_ids;
  std::deque<const SweepPoint*> queue;
  for (const SweepPoint& p : sweep.points) {
    if (!options.shard.contains(p.index)) continue;
    ++outcome.points;
    shard_ids.push_back(p.id);
    const auto& existing = table.existing();
    if (const auto it = existing.by_id.find(p.id); it != existing.by_id.end()) {
      ++outcome.already_done;
      outcome.failed += row_failed(existing.rows[it->second]) ? 1 : 0;
    } else {
      queue.push_back(&p);
    }
  }

  Progress progress(outcome.points, outcome.already_done, outcome.failed, options.progress);
  const std::vector<std::string> header = points_header_fields(sweep);
  auto record = [&](const SweepPoint& p, const Json* summary, const std::string& error) {
    table.append(point_row(header, p, summary, error));
    ++outcome.ran;
    outcome.failed += summary ? 0 : 1;
    progress.point_finished(summary != nullptr);
  };
  std::vector<RunningPoint> running;
  const std::size_t jobs = static_cast<std::size_t>(std::max(1, options.jobs));
  while (!queue.empty() || !running.empty()) {
    start_points(queue, jobs, out, running, record);
    if (running.empty()) continue;
    record_finished(running, options.point_timeout, record);
    progress.tick();
  }
  progress.close();
  // Rows went in as points finished; once the shard is complete, put them in expansion order so
  // that the file does not depend on -j or on timing.
  const auto& recorded = table.existing().by_id;
  if (std::all_of(shard_ids.begin(), shard_ids.end(),
                  [&](const std::string& id) { return recorded.contains(id); }))
    table.reorder(shard_ids);
  return outcome;
}

std::size_t merge_sweep(const Sweep& sweep, const std::string& out_dir,
                        const std::vector<std::string>& shard_dirs) {
  const fs::path out(out_dir);
  const std::string header = points_header(sweep);
  struct Found {
    std::string row;
    fs::path shard;
  };
  std::map<std::string, Found> found;
  std::vector<std::string> read_order;
  for (const std::string& dir : shard_dirs) {
    if (fs::exists(dir) && fs::exists(out) && fs::equivalent(dir, out))
      throw InputError(dir + ": the merge output cannot be one of the shards");
    const PointsRows shard = read_points_csv((fs::path(dir) / "points.csv").string());
    if (shard.header.empty()) throw InputError(dir + ": no points.csv (not a sweep output folder)");
    if (const std::string held = recorded_fingerprint(dir); !held.empty() && held != sweep.fingerprint)
      throw InputError(fmt::format("{}: holds the points of another sweep (fingerprint {}, {}'s {})", dir,
                                   held, sweep.file, sweep.fingerprint));
    if (shard.header != header)
      throw InputError(dir + "/points.csv: its columns differ from those of " + sweep.file +
                       " (another sweep?)");
    for (const std::string& row : shard.rows) {
      const std::string id = split_csv_line(row)[0];
      if (const auto it = found.find(id); it != found.end())
        throw InputError("point " + id + " is in both " + it->second.shard.string() + " and " + dir);
      found.emplace(id, Found{row, dir});
      read_order.push_back(id);
    }
  }
  check_output_folder("--out", out_dir, kSweepFolder, {sweep.file});
  // The shards are valid: only now is the output folder made.
  prepare_out_dir(out_dir);
  const FolderLock lock(out);
  std::vector<std::string> ordered_ids;
  for (const SweepPoint& p : sweep.points) ordered_ids.push_back(p.id);
  std::vector<std::string> rows;
  std::size_t merged = 0;
  auto take = [&](const std::string& id) {
    const auto it = found.find(id);
    if (it == found.end()) return;
    rows.push_back(it->second.row);
    const fs::path source = it->second.shard / "points" / id, target = out / "points" / id;
    if (fs::exists(source)) {
      fs::remove_all(target);
      // Hard links where the file system allows: point outputs are replaced by rename, never edited.
      std::error_code linked;
      fs::copy(source, target, fs::copy_options::recursive | fs::copy_options::create_hard_links, linked);
      if (linked) {
        fs::remove_all(target);
        fs::copy(source, target, fs::copy_options::recursive);
      }
    }
    found.erase(it);
  };
  for (const std::string& id : ordered_ids) {
    merged += found.contains(id) ? 1 : 0;
    take(id);
  }
  for (const std::string& id : read_order) take(id);  // rows of points no longer in the sweep, as they were
  replace_points_csv((out / "points.csv").string(), header, rows);
  return merged;
}

}  // namespace semsim
