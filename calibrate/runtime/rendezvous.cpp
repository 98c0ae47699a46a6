#include "calibrate/runtime/rendezvous.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace semsim {
namespace {

namespace fs = std::filesystem;

std::string heartbeat_path(const std::string& raw, int rank) {
  return (fs::path(rank_folder(raw, rank)) / "heartbeat").string();
}

std::string status_path(const std::string& raw, int rank) {
  return (fs::path(rank_folder(raw, rank)) / "status").string();
}

long long seconds_of(RendezvousClock::duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

}  // namespace

void publish_file(const std::string& path, const std::string& contents) {
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  // Unique per process and host: two writers never share a temporary file.
  char host[128] = {};
  gethostname(host, sizeof(host) - 1);
  std::string name = ".";
  name.append(target.filename().string())
      .append(".")
      .append(host)
      .append(".")
      .append(std::to_string(getpid()));
  const fs::path temporary = target.parent_path() / name;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << contents;
    out.flush();
    if (!out) throw CalibrationFault("cannot write " + temporary.string());
  }
  fs::rename(temporary, target);
}

void publish_run_file(const std::string& path, const std::string& run, const std::string& payload) {
  publish_file(path, run + "\n" + payload);
}

std::optional<std::string> read_run_file(const std::string& path, const std::string& run) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string token;
  if (!std::getline(in, token) || token != run) return std::nullopt;
  std::ostringstream payload;
  payload << in.rdbuf();
  return payload.str();
}

std::string wait_for_run_file(const std::string& path, const std::string& run,
                              RendezvousClock::duration timeout, RendezvousClock::duration poll,
                              const std::function<void()>& while_waiting) {
  const auto deadline = RendezvousClock::now() + timeout;
  for (;;) {
    if (auto payload = read_run_file(path, run)) return *payload;
    if (RendezvousClock::now() >= deadline)
      throw CalibrationFault("no " + path + " of run " + run + " after " +
                             std::to_string(seconds_of(timeout)) +
                             " s (did rank 0 start, and do all nodes see this folder?)");
    if (while_waiting) while_waiting();
    std::this_thread::sleep_for(poll);
  }
}

std::string to_hex(const void* data, std::size_t bytes) {
  static const char digits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string text;
  for (std::size_t i = 0; i < bytes; ++i) text += digits[p[i] >> 4], text += digits[p[i] & 15];
  return text;
}

std::vector<unsigned char> from_hex(const std::string& text) {
  auto digit = [&](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw CalibrationFault("not a hex id: '" + text + "'");
  };
  if (text.size() % 2 != 0) throw CalibrationFault("not a hex id (odd length): '" + text + "'");
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i < text.size(); i += 2)
    bytes.push_back(static_cast<unsigned char>(digit(text[i]) * 16 + digit(text[i + 1])));
  return bytes;
}

std::string rank_folder(const std::string& raw, int rank) {
  return (fs::path(raw) / ("rank-" + std::to_string(rank))).string();
}

std::string nccl_id_path(const std::string& raw) {
  return (fs::path(raw) / "nccl-id").string();
}

std::string abort_path(const std::string& raw) {
  return (fs::path(raw) / "abort").string();
}

void write_heartbeat(const std::string& raw, const std::string& run, int rank, const std::string& host,
                     long long beats, long long progress, const std::string& phase) {
  publish_run_file(heartbeat_path(raw, rank), run,
                   host + "\n" + std::to_string(beats) + " " + std::to_string(progress) + " " + phase);
}

void write_rank_status(const std::string& raw, const std::string& run, int rank, const std::string& status) {
  publish_run_file(status_path(raw, rank), run, status);
}

void request_abort(const std::string& raw, const std::string& run, const std::string& why) {
  if (!read_run_file(abort_path(raw), run)) publish_run_file(abort_path(raw), run, why);
}

std::optional<std::string> abort_requested(const std::string& raw, const std::string& run) {
  return read_run_file(abort_path(raw), run);
}

RunWatch::RunWatch(std::string raw, std::string run, int ranks, WatchLimits limits,
                   RendezvousClock::time_point start, int watcher)
    : raw_(std::move(raw)),
      run_(std::move(run)),
      limits_(limits),
      watcher_(watcher),
      ranks_(static_cast<std::size_t>(ranks)) {
  for (Seen& seen : ranks_) seen.beat_at = seen.progress_at = start;
}

std::optional<std::string> RunWatch::fault(RendezvousClock::time_point now) {
  for (std::size_t rank = 0; rank < ranks_.size(); ++rank) {
    Seen& seen = ranks_[rank];
    const int r = static_cast<int>(rank);
    if (r == watcher_) continue;
    if (const auto beat = read_run_file(heartbeat_path(raw_, r), run_)) {
      std::istringstream in(*beat);
      std::string host, phase;
      long long beats = 0, progress = 0;
      if (std::getline(in, host) && in >> beats >> progress && std::getline(in >> std::ws, phase)) {
        seen.host = host;
        seen.phase = phase;
        if (seen.beats != beats) seen.beats = beats, seen.beat_at = now;
        if (seen.progress != progress) seen.progress = progress, seen.progress_at = now;
      }
    }
    const std::string who = "rank " + std::to_string(r) + " (" + seen.host + ")";
    if (!seen.status) seen.status = read_run_file(status_path(raw_, r), run_);
    if (seen.status) {
      if (*seen.status != "ok") return who + " " + *seen.status;
      continue;
    }
    if (now - seen.beat_at > limits_.silent)
      return who + (seen.beats ? " stopped beating" : " never started") + ": no heartbeat for " +
             std::to_string(seconds_of(now - seen.beat_at)) + " s (last phase: " + seen.phase +
             "); the process died or its node is unreachable";
    if (now - seen.progress_at > limits_.stuck)
      return who + " is stuck: no progress for " + std::to_string(seconds_of(now - seen.progress_at)) +
             " s in " + seen.phase;
  }
  return std::nullopt;
}

bool RunWatch::all_finished() const {
  for (std::size_t rank = 0; rank < ranks_.size(); ++rank)
    if (static_cast<int>(rank) != watcher_ && ranks_[rank].status != "ok") return false;
  return true;
}

void wait_for_ranks(const std::string& raw, const std::string& run, int ranks, WatchLimits limits,
                    RendezvousClock::duration poll) {
  RunWatch watch(raw, run, ranks, limits, RendezvousClock::now());
  for (;;) {
    if (const auto fault = watch.fault(RendezvousClock::now())) throw CalibrationFault(*fault);
    if (watch.all_finished()) return;
    if (const auto why = abort_requested(raw, run)) throw CalibrationFault("the run was aborted: " + *why);
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace semsim
