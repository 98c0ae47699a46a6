// scripts/live-device end to end on a machine without a GPU, against stand-ins for what needs one:
// nvidia-smi listing an H200, an nvcc whose links install stand-in programs, microbenchmarks that
// write a synthetic H200's raw results (tests/calibrate/raw_fixture.hpp) and a replay whose live
// times are the export's simulated ones x 1.25. Everything else is real: the calibration's fit with
// SEMSIM (as on a GPU machine without the project's packages), the exports at each rate for each
// profile, the choice of the rank to replay, `semsim live` and `semsim compare-live`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "calibrate/replay/step_export.hpp"
#include "cli_runner.hpp"
#include "tests/calibrate/raw_fixture.hpp"

namespace semsim::cli_test {
namespace {

constexpr const char* kStandInNvidiaSmi = R"sh(#!/usr/bin/env bash
echo "GPU 0: NVIDIA H200 (UUID: GPU-stand-in)"
)sh";

// Logs its arguments; an object is an empty file; a link installs the stand-in program of the
// output's name.
constexpr const char* kStandInNvcc = R"sh(#!/usr/bin/env bash
echo "$*" >>"$STAND_INS/nvcc.log"
out=""
while [[ $# -gt 0 ]]; do [[ $1 == -o ]] && out=$2; shift; done
if [[ $out == *.o ]]; then : >"$out"; else cp "$STAND_INS/$(basename "$out")" "$out"; fi
)sh";

constexpr const char* kStandInBench = R"sh(#!/usr/bin/env bash
while [[ $# -gt 0 ]]; do [[ $1 == --out ]] && out=$2; shift; done
cp "$STAND_INS"/raw/*.csv "$out"/
)sh";

// Logs which rank of which export it was asked for; each compute phase of that rank (those with
// simulated time) takes 1.25 x the export's simulated time; the replay of $FAIL_REPLAY fails.
constexpr const char* kStandInLive = R"sh(#!/usr/bin/env bash
export=$1
shift
while [[ $# -gt 0 ]]; do case $1 in --out) out=$2 ;; --rank) rank=$2 ;; esac; shift; done
echo "$(basename "$export") $rank" >>"$STAND_INS/replays.log"
[[ $(basename "$export") != "${FAIL_REPLAY:-none}.steps" ]] || { echo "stand-in replay: failed" >&2; exit 1; }
mkdir -p "$out"
printf 'check,max_error,tolerance,passed,note\ngemm_bf16,0,0.02,true,\n' >"$out/checks.csv"
awk -v rank="$rank" '
  function value(key,   i) {
    for (i = 2; i <= NF; i++) if (index($i, key "=") == 1) return substr($i, length(key) + 2)
  }
  function emit(phase, seconds) {
    if (seconds > 0) printf "%s,%s,%s,%.6f,%.6f,%.6f,2,graph\n", step, rank, phase, 1.25e6 * seconds,
                            1.2e6 * seconds, 1.3e6 * seconds
  }
  function finish() { if (step != "") { emit("other", other); emit("attention", attention); emit("experts", experts) } }
  BEGIN { print "step,rank,phase,median_us,p10_us,p90_us,repeats,launch" }
  /^step / { finish(); step = value("index"); r = 0; other = attention = experts = 0 }
  /^rank / { if (r++ == rank) other = value("other_s") }
  /^layer / { e = 0 }
  /^experts / { if (e++ == rank) { attention += value("attention_s"); experts += value("experts_s") } }
  END { finish() }
' "$export" >"$out/steps.csv"
)sh";

void install(const TempDir& tmp, const std::string& name, const char* text) {
  std::ofstream(tmp / name) << text;
  fs::permissions(tmp / name, fs::perms::owner_all);
}

// The rank with the most new tokens over the export's window (ties: the lowest).
int busiest_rank(const StepExport& data) {
  std::vector<long long> tokens(static_cast<std::size_t>(data.ranks), 0);
  for (const ExportedStep& step : data.steps)
    for (std::size_t r = 0; r < tokens.size(); ++r) tokens[r] += step.ranks[r].tokens();
  return static_cast<int>(std::max_element(tokens.begin(), tokens.end()) - tokens.begin());
}

// A folder with the stand-ins (bin/ first on PATH) and live-device's exit status on OUT with `env`.
class cliLiveDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(tmp_ / "bin");
    fs::create_directories(tmp_ / "stand-ins/raw");
    install(tmp_, "bin/nvidia-smi", kStandInNvidiaSmi);
    install(tmp_, "bin/nvcc", kStandInNvcc);
    install(tmp_, "stand-ins/semsim-calibrate-bench", kStandInBench);
    install(tmp_, "stand-ins/semsim-live", kStandInLive);
    test::write_raw(tmp_ / "stand-ins/raw");
  }
  int live_device(const std::string& env = "") {
    const std::string command = "PATH=" + tmp_ / "bin" + ":$PATH STAND_INS=" + tmp_ / "stand-ins" +
                                " SEMSIM=" + SEMSIM_BINARY + " " + env + " " + SEMSIM_SOURCE_DIR +
                                "/scripts/live-device " + out_ + " --quick --rates 20,40 --steps 1000:3 > " +
                                tmp_ / "log" + " 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  TempDir tmp_;
  const std::string out_ = tmp_ / "out";
};

TEST_F(cliLiveDevice, CalibratesExportsReplaysTheBusiestRankAndComparesEveryProfile) {
  ASSERT_EQ(live_device(), 0) << read_file(tmp_ / "log");
  // The fit ran on the stand-in's raw results: three profiles, each with two rates.
  ASSERT_TRUE(fs::exists(out_ + "/profile.yaml")) << read_file(tmp_ / "log");
  std::map<std::string, int> replayed;
  for (const std::string& line : split_lines(read_file(tmp_ / "stand-ins/replays.log"))) {
    const std::string file = line.substr(0, line.find(' '));
    replayed[file] = std::stoi(line.substr(line.find(' ') + 1));
  }
  const std::vector<std::string> profiles{"datasheet", "database", "self"};
  ASSERT_EQ(replayed.size(), 6u) << read_file(tmp_ / "stand-ins/replays.log");
  for (const std::string& p : profiles)
    for (const std::string rate : {"20", "40"}) {
      const std::string name = p + "-r" + rate + ".steps";
      const StepExport data = read_step_export(out_ + "/exports/" + name);
      EXPECT_EQ(data.steps.size(), 3u);
      EXPECT_EQ(data.rate, std::stod(rate));
      EXPECT_EQ(replayed[name], busiest_rank(data)) << name;
      EXPECT_TRUE(fs::exists(out_ + "/live/" + p + "-r" + rate + "/steps.csv")) << name;
    }

  // Every phase the replay measured is 1.25 x its simulated time: |error| 20 % throughout.
  const std::string comparison = read_file(out_ + "/comparison.md");
  EXPECT_EQ(comparison.find("Mixed"), std::string::npos);  // every phase timed as a CUDA graph
  for (const std::string& p : profiles) {
    EXPECT_NE(comparison.find("\n## " + p + " (calibration: "), std::string::npos) << comparison;
    const std::string summary = read_file(out_ + "/compare/" + p + "/summary.md");
    for (const std::string phase : {"other", "attention", "experts", "step"})
      EXPECT_NE(summary.find("| " + phase + " | "), std::string::npos) << p << "\n" << summary;
    for (const std::string& line : split_lines(summary)) {
      const bool measured_row =
          line.starts_with("| ") && !line.starts_with("| phase") && line.find(" | 0 |") == std::string::npos;
      EXPECT_TRUE(!measured_row || line.ends_with("| 20.0% | 20.0% |")) << p << ": " << line;
    }
    EXPECT_EQ(split_lines(read_file(out_ + "/compare/" + p + "/throughput.csv")).size(), 3u);  // header + 2
  }
}

TEST_F(cliLiveDevice, AFailedReplayIsLeftOutAndSaidSoTheOthersAreCompared) {
  EXPECT_EQ(live_device("FAIL_REPLAY=database-r40"), 1) << read_file(tmp_ / "log");
  const std::string comparison = read_file(out_ + "/comparison.md");
  EXPECT_NE(comparison.find("Partial: the replays of database-r40 failed and are left out."),
            std::string::npos)
      << comparison;
  EXPECT_EQ(split_lines(read_file(out_ + "/compare/database/throughput.csv")).size(), 2u);  // rate 20 only
  EXPECT_EQ(split_lines(read_file(out_ + "/compare/self/throughput.csv")).size(), 3u);
}

// A machine whose toolkit has nvcc but neither cuBLAS nor NCCL, both in Python wheels (nvidia-*),
// which have no unversioned .so: calibrate-device compiles and links against the wheels' files.
TEST_F(cliLiveDevice, CalibrateDeviceTakesCublasAndNcclFromPythonWheels) {
  const std::string wheels = tmp_ / "site-packages";
  for (const std::string file :
       {"cublas/include/cublas_v2.h", "cublas/lib/libcublas.so.13", "cublas/lib/libcublasLt.so.13",
        "nccl/include/nccl.h", "nccl/lib/libnccl.so.2"}) {
    fs::create_directories(fs::path(wheels + "/nvidia/" + file).parent_path());
    std::ofstream(wheels + "/nvidia/" + file) << "";
  }
  const std::string command = "PATH=" + tmp_ / "bin" + ":$PATH PYTHONPATH=" + wheels +
                              " STAND_INS=" + tmp_ / "stand-ins" + " SEMSIM=" + SEMSIM_BINARY + " " +
                              SEMSIM_SOURCE_DIR + "/scripts/calibrate-device " + out_ + " --quick > " +
                              tmp_ / "log" + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file(tmp_ / "log");
  const std::vector<std::string> calls = split_lines(read_file(tmp_ / "stand-ins/nvcc.log"));
  const auto called = [&](const std::string& text) {
    return std::any_of(calls.begin(), calls.end(),
                       [&](const std::string& c) { return c.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(called("-I" + wheels + "/nvidia/cublas/include")) << read_file(tmp_ / "stand-ins/nvcc.log");
  EXPECT_TRUE(called("-I" + wheels + "/nvidia/nccl/include"));
  EXPECT_TRUE(called("calibrate/bench/collectives.cpp"));  // built with NCCL
  EXPECT_TRUE(called("-l:libcublas.so.13 -l:libcublasLt.so.13"));
  EXPECT_TRUE(called("-l:libnccl.so.2"));
  EXPECT_TRUE(fs::exists(out_ + "/profile.yaml")) << read_file(tmp_ / "log");
}

}  // namespace
}  // namespace semsim::cli_test
