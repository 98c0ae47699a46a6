#include "sim/outputs/output_staging.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"

namespace semsim {
namespace fs = std::filesystem;

namespace {

bool one_of(const std::string& name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The folder `path` is in ("." for a bare name).
fs::path folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

void check_output_folder(const std::string& option, const std::string& out_dir,
                         const OutputFolderContents& contents, const std::vector<std::string>& inputs) {
  const std::string name = output_name(option, out_dir);
  if (out_dir.empty()) throw InputError(option + ": an empty folder name");
  const fs::path dir(out_dir);
  if (path_exists(dir) && !is_folder(dir)) throw InputError(name + ": is a file, not a folder");
  fs::path existing = fs::absolute(dir).lexically_normal();
  while (!path_exists(existing) && existing.has_relative_path()) existing = existing.parent_path();
  if (!is_folder(existing))
    throw InputError(fmt::format("{}: '{}' is a file, not a folder", name, existing.string()));
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw InputError(
        fmt::format("{}: cannot write in folder '{}': {}", name, existing.string(), std::strerror(errno)));
  for (const std::string& input : inputs) {
    if (same_path(input, dir))
      throw InputError(fmt::format("{}: is also an input of this command; give another folder", name));
    if (same_path(folder_of(input), dir) && contents.is_output(fs::path(input).filename().string()))
      throw InputError(
          fmt::format("{}: holds '{}', an input of this command that its outputs would replace; give "
                      "another folder",
                      name, input));
  }
  if (!is_folder(dir)) return;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string entry_name = entry.path().filename().string();
    const bool folder = entry.is_directory(error);
    if (folder && (entry_name.starts_with(".staging-") || one_of(entry_name, contents.subfolders))) continue;
    if (!folder && (entry_name.starts_with(".partial-") || contents.is_output(entry_name))) continue;
    if (folder && contents.is_output(entry_name))
      throw InputError(fmt::format(
          "{}: holds a folder '{}' where semsim writes a file; remove it or choose another folder", name,
          entry_name));
    if (!folder && one_of(entry_name, contents.subfolders))
      throw InputError(fmt::format(
          "{}: holds a file '{}' where semsim writes a folder; remove it or choose another folder", name,
          entry_name));
    throw InputError(fmt::format(
        "{}: holds '{}', which semsim did not write; semsim writes only into an empty folder or one holding "
        "an earlier run's outputs (which it replaces)",
        name, entry_name));
  }
}

OutputStaging::OutputStaging(std::vector<std::string> inputs) : inputs_(std::move(inputs)) {}

OutputStaging::OutputStaging(const std::string& out_dir, IsOutputFile is_output,
                             std::vector<std::string> inputs)
    : OutputStaging(std::move(inputs)) {
  folder("--out", out_dir, {std::move(is_output), {}});
}

OutputStaging::~OutputStaging() {
  std::error_code ignored;
  if (!staging_dir_.empty()) fs::remove_all(staging_dir_, ignored);
  outside_.clear();  // each removes its staged file unless committed
  if (!committed_)
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ignored);  // if empty
}

void OutputStaging::check_distinct(const std::string& option, const std::string& destination) const {
  for (const auto& [other_option, other] : destinations_)
    if (same_path(destination, other))
      throw InputError(fmt::format("{}: is also the destination of {}; give each output its own name",
                                   output_name(option, destination), other_option));
  if (!out_dir_.empty() && inside(destination, out_dir_))
    throw InputError(
        fmt::format("{}: lies inside the output folder '{}', which holds only its own files; "
                    "write it elsewhere",
                    output_name(option, destination), out_dir_));
}

void OutputStaging::folder(const std::string& option, const std::string& out_dir,
                           OutputFolderContents contents) {
  if (!out_dir_.empty()) throw std::logic_error("OutputStaging: a second output folder");
  check_distinct(option, out_dir);
  for (const auto& [file_option, file] : destinations_)
    if (inside(file, out_dir))
      throw InputError(
          fmt::format("{}: lies inside the output folder {}, which holds only its own files; "
                      "write it elsewhere",
                      output_name(file_option, file), output_name(option, out_dir)));
  check_output_folder(option, out_dir, contents, inputs_);
  out_dir_ = out_dir;
  is_output_ = std::move(contents.is_output);
  destinations_.emplace_back(option, out_dir);
  // The folders missing above it, outermost first: removed again unless the outputs come.
  std::vector<fs::path> missing;
  for (fs::path dir = fs::path(out_dir).lexically_normal(); !dir.empty() && !path_exists(dir);
       dir = dir.parent_path())
    missing.push_back(dir);
  try {
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      removals_.push_back(
          std::make_unique<RemovedOnInterruption>(it->string(), RemovedOnInterruption::Kind::kEmptyFolder));
      fs::create_directory(*it);
      created_.push_back(it->string());
    }
    remove_leftovers_of_dead_processes(out_dir_, ".staging-");
    staging_dir_ = (fs::path(out_dir_) / fmt::format(".staging-{}", ::getpid())).string();
    removals_.push_back(
        std::make_unique<RemovedOnInterruption>(staging_dir_, RemovedOnInterruption::Kind::kTree));
    fs::remove_all(staging_dir_);
    fs::create_directories(staging_dir_);
  } catch (const fs::filesystem_error& e) {
    throw InputError(fmt::format("{}: cannot create the output folder ({})", output_name(option, out_dir),
                                 e.code().message()));
  }
}

std::string OutputStaging::staged(const std::string& file_name) {
  files_.push_back(file_name);
  return (fs::path(staging_dir_) / file_name).string();
}

std::string OutputStaging::staged_at(const std::string& option, const std::string& destination) {
  check_distinct(option, destination);
  outside_.push_back(std::make_unique<StagedFile>(option, destination, inputs_));
  destinations_.emplace_back(option, destination);
  return outside_.back()->path();
}

void OutputStaging::commit() {
  const InterruptionsHeldBack held_back;  // the outputs are all in place, or none is
  try {
    for (const auto& name : files_) fs::rename(fs::path(staging_dir_) / name, fs::path(out_dir_) / name);
    // An earlier run's file this run does not write (its outputs switched off, fewer clusters) would
    // be stale beside the new ones.
    if (!out_dir_.empty()) {
      std::vector<fs::path> stale;
      for (const auto& entry : fs::directory_iterator(out_dir_)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() && is_output_(name) &&
            std::find(files_.begin(), files_.end(), name) == files_.end())
          stale.push_back(entry.path());
      }
      for (const fs::path& path : stale) fs::remove(path);
    }
  } catch (const fs::filesystem_error& e) {
    throw InputError(fmt::format("{}: cannot put the outputs in place ({})", out_dir_, e.code().message()));
  }
  for (const auto& file : outside_) file->commit();
  committed_ = true;
}

}  // namespace semsim
