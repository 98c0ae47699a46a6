#pragma once
// A private temporary folder for a unit test, removed with everything in it when the test ends
// (the CLI tests have their own, cli_runner.hpp's TempDir).
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace semsim::test {

class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "semsim-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempFolder() { std::filesystem::remove_all(path_); }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace semsim::test
