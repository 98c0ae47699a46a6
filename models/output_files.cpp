#include "models/output_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"

namespace semsim {
namespace fs = std::filesystem;

namespace {

// `path` absolute, its existing part's links resolved.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return path.lexically_normal();
  fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? absolute.lexically_normal() : canonical;
}

}  // namespace

void write_text_file(const std::string& path, std::string_view text) {
  auto failed = [&] { return InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno))); };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw failed();
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const InputError error = failed();
      ::close(fd);
      throw error;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw failed();
}

std::string output_name(const std::string& option, const std::string& path) {
  return option.empty() ? path : fmt::format("{} '{}'", option, path);
}

bool same_path(const fs::path& a, const fs::path& b) {
  std::error_code error;
  if (path_exists(a) && path_exists(b)) return fs::equivalent(a, b, error);
  return resolved(a) == resolved(b);
}

bool inside(const fs::path& path, const fs::path& folder) {
  const fs::path relative = resolved(path).lexically_relative(resolved(folder));
  return !relative.empty() && *relative.begin() != ".." && relative != ".";
}

void check_output_file(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs) {
  const std::string name = output_name(option, path);
  if (path.empty()) throw InputError(option + ": an empty file name");
  const fs::path file(path);
  std::error_code error;
  const fs::file_status status = fs::status(file, error);
  if (fs::is_directory(status)) throw InputError(name + ": is a folder; give a file name");
  // Outputs are renamed into place: a device or a pipe would be replaced, not written to.
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw InputError(name + ": is not a plain file (a device, a pipe or a socket); give a file name");
  const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (!is_folder(folder))
    throw InputError(fmt::format("{}: no folder '{}' to write it in", name, folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(
        fmt::format("{}: cannot write in folder '{}': {}", name, folder.string(), std::strerror(errno)));
  for (const std::string& input : inputs) {
    if (same_path(file, input))
      throw InputError(
          fmt::format("{}: is also an input of this command ('{}'); writing it would destroy it: "
                      "give another file name",
                      name, input));
    if (path_exists(file) && inside(file, input))
      throw InputError(
          fmt::format("{}: would overwrite a file inside the input folder '{}'; give a file name outside it",
                      name, input));
  }
}

StagedFile::StagedFile(const std::string& option, const std::string& destination,
                       const std::vector<std::string>& inputs)
    : destination_(destination) {
  check_output_file(option, destination, inputs);
  const fs::path target(destination);
  const fs::path folder = target.parent_path();
  const std::string name = target.filename().string();
  remove_leftovers_of_dead_processes(folder.empty() ? fs::path(".") : folder, ".partial-", "-" + name);
  staged_ = (folder / fmt::format(".partial-{}-{}", ::getpid(), name)).string();
  removal_.emplace(staged_, RemovedOnInterruption::Kind::kFile);
  try {
    write_text_file(staged_, "");
  } catch (const InputError& e) {
    throw InputError(output_name(option, destination) + ": " + e.what());
  }
}

StagedFile::~StagedFile() {
  if (!removal_) return;  // committed
  std::error_code ignored;
  fs::remove(staged_, ignored);
}

void StagedFile::commit() {
  // The rename must not reach the disk before the data it points to.
  const int fd = ::open(staged_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code error;
  fs::rename(staged_, destination_, error);
  if (error) throw InputError(fmt::format("{}: cannot put it in place: {}", destination_, error.message()));
  removal_.reset();
}

}  // namespace semsim
