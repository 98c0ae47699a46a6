#include "sim/outputs/output_staging.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"

namespace semsim {
namespace fs = std::filesystem;

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

namespace {

// A folder that holds anything but an earlier run's outputs (or a killed run's staging folder) is
// someone else's: refuse it rather than mix or delete.
void check_out_dir_is_ours(const std::string& out_dir, const IsOutputFile& is_output) {
  std::error_code error;
  if (!fs::is_directory(out_dir, error)) return;
  for (const auto& entry : fs::directory_iterator(out_dir, error)) {
    const std::string name = entry.path().filename().string();
    if ((!entry.is_directory() && is_output(name)) || (entry.is_directory() && name.starts_with(".staging-")))
      continue;
    throw InputError(fmt::format(
        "--out '{}': holds '{}', which semsim did not write; semsim writes only into an empty folder or "
        "one holding an earlier run's outputs (which it replaces)",
        out_dir, name));
  }
}

}  // namespace

OutputStaging::OutputStaging(const std::string& out_dir, IsOutputFile is_output)
    : out_dir_(out_dir), is_output_(std::move(is_output)) {
  staging_dir_ = (fs::path(out_dir_) / fmt::format(".staging-{}", ::getpid())).string();
  check_out_dir_is_ours(out_dir_, is_output_);
  try {
    fs::create_directories(out_dir_);
    remove_leftovers_of_dead_processes(out_dir_, ".staging-");
    fs::remove_all(staging_dir_);
    fs::create_directories(staging_dir_);
  } catch (const fs::filesystem_error& e) {
    throw InputError("--out '" + out_dir_ + "': cannot create the output folder (" + e.code().message() +
                     ")");
  }
}

OutputStaging::~OutputStaging() {
  std::error_code ignored;
  fs::remove_all(staging_dir_, ignored);
  for (const auto& [staged, destination] : outside_) fs::remove(staged, ignored);
}

std::string OutputStaging::staged(const std::string& file_name) {
  files_.push_back(file_name);
  return (fs::path(staging_dir_) / file_name).string();
}

std::string OutputStaging::staged_at(const std::string& destination) {
  const fs::path target(destination);
  remove_leftovers_of_dead_processes(target.parent_path().empty() ? fs::path(".") : target.parent_path(),
                                     target.filename().string() + ".partial-");
  outside_.emplace_back(fmt::format("{}.partial-{}", destination, ::getpid()), destination);
  return outside_.back().first;
}

void OutputStaging::commit() {
  for (const auto& name : files_) fs::rename(fs::path(staging_dir_) / name, fs::path(out_dir_) / name);
  // An earlier run's file this run does not write (its outputs switched off, fewer clusters) would
  // be stale beside the new ones.
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(out_dir_)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() && is_output_(name) &&
        std::find(files_.begin(), files_.end(), name) == files_.end())
      stale.push_back(entry.path());
  }
  for (const fs::path& path : stale) fs::remove(path);
  for (const auto& [staged, destination] : outside_) fs::rename(staged, destination);
  outside_.clear();
}

}  // namespace semsim
