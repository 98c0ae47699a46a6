#pragma once
// Runs the semsim executable (SEMSIM_BINARY) as a child process and captures what it did: exit code,
// stdout and stderr; and compares runs with and without the progress line. Used by the CLI tests only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "models/sanitizers.hpp"

namespace semsim::cli_test {

namespace fs = std::filesystem;

// How many times longer the CLI tests wait for semsim (the run timeout, and the fixed delays of the
// few tests that kill a run on purpose): the sanitizers slow it several-fold (the default scenario
// runs 3.6 times longer).
inline constexpr int kSlowdown = kAddressSanitizer ? 4 : 1;

struct CliResult {
  int exit_code = -1;  // the process's exit status, or 128 + signal number when it was killed
  std::string out;
  std::string err;
  bool timed_out = false;
};

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A CSV's column `column` (named in its header line) as numbers, one per row ("" -> NaN).
inline std::vector<double> column_of(const std::string& csv, const std::string& column) {
  const std::vector<std::string> lines = split_lines(csv);
  std::vector<std::string> header;
  std::stringstream names(lines.at(0));
  for (std::string name; std::getline(names, name, ',');) header.push_back(name);
  const auto index =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), column) - header.begin());
  if (index == header.size()) throw std::invalid_argument("no CSV column '" + column + "'");
  std::vector<double> values;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::stringstream fields(lines[i]);
    std::string field;
    for (std::size_t f = 0; f <= index; ++f) std::getline(fields, field, ',');
    values.push_back(field.empty() ? std::nan("") : std::stod(field));
  }
  return values;
}

// A fresh folder under the system temp folder, removed (with its contents) on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "semsim-cli-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// How a semsim process is started: its working folder (the test's own when empty), limits (ulimit
// -v and -f) and where its stdout goes (captured when empty).
struct Launch {
  std::string cwd;
  rlim_t address_space_bytes = RLIM_INFINITY;
  rlim_t file_size_bytes = RLIM_INFINITY;
  std::string stdout_path;
};

// A semsim process started by start_semsim, until wait_for_semsim.
struct RunningSemsim {
  pid_t pid = -1;
  std::unique_ptr<TempDir> capture;  // its stdout and stderr
  std::string out_path, err_path;
  bool stdout_captured = true;  // false: it went to Launch::stdout_path, which is not read back
};

inline RunningSemsim start_semsim(const std::vector<std::string>& args, const Launch& launch = {}) {
  RunningSemsim running;
  running.capture = std::make_unique<TempDir>();
  running.out_path = launch.stdout_path.empty() ? *running.capture / "stdout" : launch.stdout_path;
  running.err_path = *running.capture / "stderr";
  running.stdout_captured = launch.stdout_path.empty();
  std::vector<std::string> argv_storage{SEMSIM_BINARY};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  running.pid = ::fork();
  if (running.pid < 0) throw std::runtime_error("fork failed");
  if (running.pid == 0) {
    const int out_fd = ::open(running.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(running.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || null_fd < 0) ::_exit(126);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    if (!launch.cwd.empty() && ::chdir(launch.cwd.c_str()) != 0) ::_exit(126);
    for (const auto& [resource, bytes] : {std::pair{RLIMIT_AS, launch.address_space_bytes},
                                          std::pair{RLIMIT_FSIZE, launch.file_size_bytes}}) {
      const rlimit limit{bytes, bytes};
      if (bytes != RLIM_INFINITY && ::setrlimit(resource, &limit) != 0) ::_exit(126);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return running;
}

// Waits for `running` to end, killing it after `timeout_s` seconds, and returns what it did.
inline CliResult wait_for_semsim(RunningSemsim& running, int timeout_s = 120 * kSlowdown) {
  CliResult result;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (true) {
    const pid_t done = ::waitpid(running.pid, &status, WNOHANG);
    if (done == running.pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(running.pid, SIGKILL);
      ::waitpid(running.pid, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.exit_code = 128 + WTERMSIG(status);
  if (running.stdout_captured) result.out = read_file(running.out_path);
  result.err = read_file(running.err_path);
  return result;
}

// Runs `semsim args...` with its working folder set to `cwd` (the test's own when empty). The child is
// killed after `timeout_s` seconds; with `address_space_bytes`, it runs under that limit (ulimit -v).
inline CliResult run_semsim(const std::vector<std::string>& args, const std::string& cwd = "",
                            int timeout_s = 120 * kSlowdown, rlim_t address_space_bytes = RLIM_INFINITY) {
  Launch launch;
  launch.cwd = cwd;
  launch.address_space_bytes = address_space_bytes;
  RunningSemsim running = start_semsim(args, launch);
  return wait_for_semsim(running, timeout_s);
}

// Everything under `dir` (recursively), as paths relative to it; empty when `dir` does not exist.
inline std::vector<std::string> entries_under(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    out.push_back(fs::relative(entry.path(), dir).string() + (entry.is_directory() ? "/" : ""));
  return out;
}

// The states a progress line (--progress always) drew on stderr, in order: the text between its
// '\r' redraws and the '\n' that ends it, trailing blanks dropped.
inline std::vector<std::string> progress_states(const std::string& err) {
  std::vector<std::string> states;
  std::string state;
  for (const char c : err + '\r') {
    if (c != '\r' && c != '\n') {
      state += c;
      continue;
    }
    state.erase(state.find_last_not_of(' ') + 1);
    if (!state.empty()) states.push_back(state);
    state.clear();
  }
  return states;
}

// `text` with the wall-clock times semsim prints and writes (run's "Wall time (s):", a placement's
// solver seconds, the "(1.23 s)" a command ends with) replaced by '#', for comparing two runs.
inline std::string without_wall_clock(const std::string& text) {
  static const std::regex times(R"((Wall time \(s\): *|solver_seconds"?:? ?|solver |\(|written to \S+ in )[0-9.e+-]+)");
  return std::regex_replace(text, times, "$1#");
}

// For failure messages: the command line and everything the program said.
inline std::string describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string command = "semsim";
  for (const auto& arg : args) command += " " + arg;
  return command + "\n  exit code: " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "") +
         "\n  stdout: " + r.out.substr(0, 2000) + "\n  stderr: " + r.err.substr(0, 2000);
}

// What the placement tests simulate: DeepSeek-V2-Lite on one 8-GPU node, EP8, Attention-DP.
inline const std::string kPlacementTestModel =
    "model: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n";

// Writes dir/synthetic.yaml (`requests` prefill-only requests, prompts of 8 to `max_input` tokens,
// synthetic routing over 256 token types in 4 topics) and returns the `semsim trace synth` of it at
// `trace`; the caller asserts its exit code.
inline CliResult synthesize_prefill_trace(const TempDir& dir, int requests, int max_input,
                                          const std::string& trace) {
  std::ofstream(dir / "synthetic.yaml")
      << "schema: 1\n"
      << kPlacementTestModel << "workload:\n  requests: " << requests
      << "\n  arrival: {process: fixed, rate: 100}\n  input_len: {dist: uniform, min: 8, max: " << max_input
      << "}\n  output_len: {dist: fixed, value: 1}\n  routing: {source: synthetic, vocabulary: 256, topics: "
         "4}\n";
  return run_semsim(
      {"trace", "synth", dir / "synthetic.yaml", "--requests", std::to_string(requests), "--out", trace});
}

// `args` run in dir/always, dir/never and dir/auto with --progress always, never and the default
// (stderr is no terminal here): each succeeds, the last two draw nothing, and all print the same
// stdout but for wall-clock times. Relative paths in `args` keep each run's outputs in its folder.
inline std::vector<CliResult> run_in_each_progress_mode(const fs::path& dir,
                                                        const std::vector<std::string>& args) {
  std::vector<CliResult> runs;
  for (const std::string mode : {"always", "never", "auto"}) {
    fs::create_directories(dir / mode);
    std::vector<std::string> with = args;
    if (mode != "auto") with.insert(with.end(), {"--progress", mode});
    runs.push_back(run_semsim(with, (dir / mode).string()));
    EXPECT_EQ(runs.back().exit_code, 0) << describe(with, runs.back());
  }
  EXPECT_EQ(runs[1].err, "");
  EXPECT_EQ(runs[2].err, "");
  for (const CliResult& quiet : {runs[1], runs[2]})
    EXPECT_EQ(without_wall_clock(runs[0].out), without_wall_clock(quiet.out));
  return runs;
}

// The columns of a measured serving-runs file (../shared/serving-runs/), as the tests' fixtures write it.
inline const std::string kServingRunsHeader =
    "id,silicon_data_source,backend,backend_version,model_path,system,precision,mode,isl,osl,"
    "gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,"
    "prefill_batch_size,prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,"
    "prefill_moe_tp_size,prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,"
    "decode_pp_size,decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,"
    "silicon_tpot_ms";

}  // namespace semsim::cli_test
