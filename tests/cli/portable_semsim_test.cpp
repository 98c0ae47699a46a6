// scripts/portable-semsim: the copy loads its libraries from its own folder (none from the machine's
// but the C library's), runs a scenario as the original does, and refuses a folder in use.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(cliPortableSemsim, CopyRunsOnItsOwnLibrariesAndGivesTheSameResults) {
  TempDir tmp;
  const std::string copy = tmp / "portable",
                    script = std::string(SEMSIM_SOURCE_DIR) + "/scripts/portable-semsim";
  ASSERT_EQ(shell(script + " " + copy + " " + SEMSIM_BINARY + " > " + tmp / "log" + " 2>&1"), 0)
      << read_file(tmp / "log");
  EXPECT_NE(read_file(copy + "/README").find("needs an x86-64 Linux with GLIBC 2."), std::string::npos);

  // What ldd resolves outside the copy's lib/ is the C library's family alone.
  ASSERT_EQ(shell("ldd " + copy + "/bin/semsim > " + tmp / "ldd"), 0);
  int own = 0;
  for (const std::string& line : split_lines(read_file(tmp / "ldd"))) {
    if (line.find(copy + "/bin/../lib/") != std::string::npos) {
      ++own;
      continue;
    }
    const bool c_library =
        line.find("libc.so") != std::string::npos || line.find("libm.so") != std::string::npos ||
        line.find("ld-linux") != std::string::npos || line.find("vdso") != std::string::npos ||
        line.find("libpthread") != std::string::npos || line.find("libdl.so") != std::string::npos ||
        line.find("librt.so") != std::string::npos;
    EXPECT_TRUE(c_library) << line;
  }
  EXPECT_GT(own, 5);  // SimGrid and its own dependencies, yaml-cpp, fmt, ...

  const std::string run =
      " run default --set workload.requests=8 --set calibration=datasheet --progress never --out ";
  ASSERT_EQ(shell(copy + "/bin/semsim" + run + tmp / "copy" + " > /dev/null 2>&1"), 0);
  ASSERT_EQ(run_semsim({"run", "default", "--set", "workload.requests=8", "--set", "calibration=datasheet",
                        "--progress", "never", "--out", tmp / "original"})
                .exit_code,
            0);
  const std::string requests = read_file(tmp / "copy/requests.csv");
  EXPECT_EQ(split_lines(requests).size(), 9u);  // header + 8 requests
  EXPECT_EQ(requests, read_file(tmp / "original/requests.csv"));

  EXPECT_EQ(shell(script + " " + copy + " " + SEMSIM_BINARY + " > /dev/null 2>&1"), 2);  // not empty
}

}  // namespace
}  // namespace semsim::cli_test
