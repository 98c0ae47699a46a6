#pragma once
// Output folders that never hold a partial or torn file: a command's files are written into a
// staging folder and renamed into place only when everything succeeded.
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace semsim {

// Writes `text` to `path`; a failed write throws.
void write_text_file(const std::string& path, const std::string& text);

// Whether a file name in an output folder is one of its command's outputs.
using IsOutputFile = std::function<bool(const std::string& file_name)>;

class OutputStaging {
 public:
  // Creates out_dir and a private staging folder. out_dir may hold only earlier outputs of the
  // command (`is_output`), which a commit replaces, and staging folders of killed runs, removed here.
  OutputStaging(const std::string& out_dir, IsOutputFile is_output);
  ~OutputStaging();  // discards what was not committed
  OutputStaging(const OutputStaging&) = delete;
  OutputStaging& operator=(const OutputStaging&) = delete;

  std::string staged(const std::string& file_name);  // path to write `file_name` to
  // Path to write a file that belongs at `destination`, outside out_dir: staged beside it (same
  // file system, so the rename is atomic) and removed unless committed.
  std::string staged_at(const std::string& destination);
  void commit();  // renames every staged file into place

 private:
  std::string out_dir_;
  IsOutputFile is_output_;
  std::string staging_dir_;
  std::vector<std::string> files_;
  std::vector<std::pair<std::string, std::string>> outside_;  // staged path, destination
};

}  // namespace semsim
