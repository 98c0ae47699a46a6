#pragma once
// Output files that are never left partial and never overwrite what the command reads: each is
// checked before the command's work, written to a staged file beside its destination (same folder,
// so the rename is atomic) and renamed into place once complete. A failure, an exception or an
// interruption (models/interruption.hpp) removes the staged file; what a SIGKILL left, the next
// writer of the same destination removes. sim/outputs/output_staging.hpp stages whole folders so.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/interruption.hpp"

namespace semsim {

// Writes `text` to `path`. A write that fails (a full disk, `ulimit -f`, a read-only file system) is
// an InputError naming the file and the reason.
void write_text_file(const std::string& path, std::string_view text);

// How errors name an output: `option 'path'` ("--json 'a.json'"), or the path alone.
std::string output_name(const std::string& option, const std::string& path);

// Whether `a` and `b` are the same file or folder: the same inode when both exist (a hard link, a
// symbolic link), else the same path once made absolute with its existing links resolved.
bool same_path(const std::filesystem::path& a, const std::filesystem::path& b);
// Whether `path` lies strictly inside folder `folder` (by the same resolution).
bool inside(const std::filesystem::path& path, const std::filesystem::path& folder);

// An output file's destination, before any work: not a folder or anything but a plain file, in an
// existing folder semsim may write to, and neither one of the command's `inputs` (files or folders
// it reads) nor an existing file inside one of those folders. An InputError names `option`.
void check_output_file(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs = {});

class StagedFile {
 public:
  // Checks `destination` (check_output_file), removes the staged files of killed writers of it, and
  // creates this one's (empty), so that a destination semsim cannot write is found now.
  StagedFile(const std::string& option, const std::string& destination,
             const std::vector<std::string>& inputs = {});
  ~StagedFile();  // removes the staged file unless committed
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  const std::string& path() const { return staged_; }  // where to write; keeps the destination's name
  const std::string& destination() const { return destination_; }
  // Flushes the staged file to the disk and renames it into place. Call it with interruptions held
  // back when it is one of several files that belong together.
  void commit();

 private:
  std::string destination_, staged_;
  std::optional<RemovedOnInterruption> removal_;
};

// Calls write(staged) for a staged file of `path` and commits it: `path` is complete or untouched.
template <typename Write>
void write_atomically(const std::string& path, Write&& write) {
  StagedFile file("", path);
  write(file.path());
  file.commit();
}

}  // namespace semsim
