#pragma once
// A command's outputs, checked before its work and never left partial: the files of its output
// folder are written into a staging folder there, the files outside it are staged beside their
// destinations (models/output_files.hpp), and all are renamed into place when everything succeeded.
// A failure, an exception or an interruption removes what was staged and the folders made for it.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/interruption.hpp"
#include "models/output_files.hpp"

namespace semsim {

// Whether a file name in an output folder is one of its command's outputs.
using IsOutputFile = std::function<bool(const std::string& file_name)>;

// What an output folder may hold: the command's files (`is_output`), which a commit replaces, the
// folders its companion commands write there (`subfolders`, left as they are: a sweep's plots/),
// and the staging folders of killed runs.
struct OutputFolderContents {
  IsOutputFile is_output;
  std::vector<std::string> subfolders;
};

// The output folder `option` names, before any work: not a file; its nearest existing folder one
// semsim may write in; holding nothing but `contents` (anything else is someone else's, refused
// rather than mixed or deleted, as is an output name used by a folder or a subfolder name by a
// file); neither one of `inputs` nor holding one of them where an output would replace it.
void check_output_folder(const std::string& option, const std::string& out_dir,
                         const OutputFolderContents& contents, const std::vector<std::string>& inputs = {});

class OutputStaging {
 public:
  // `inputs`: the files and folders the command reads, which no output may be or overwrite.
  explicit OutputStaging(std::vector<std::string> inputs = {});
  // A command whose outputs are the files of folder `out_dir` (--out).
  OutputStaging(const std::string& out_dir, IsOutputFile is_output, std::vector<std::string> inputs = {});
  ~OutputStaging();  // discards what was not committed, and the folders it made for it
  OutputStaging(const OutputStaging&) = delete;
  OutputStaging& operator=(const OutputStaging&) = delete;

  // The command's output folder (one at most), checked (check_output_folder) and made, with a private
  // staging folder; the staging folders of killed runs in it are removed.
  void folder(const std::string& option, const std::string& out_dir, OutputFolderContents contents);
  std::string staged(const std::string& file_name);  // path to write `file_name` of the folder to
  // Path to write an output file outside the folder to, checked now (models/output_files.hpp, and not
  // inside the folder or another output's destination).
  std::string staged_at(const std::string& option, const std::string& destination);
  void commit();  // renames every staged file into place, the earlier outputs of the folder it replaces

 private:
  void check_distinct(const std::string& option, const std::string& destination) const;

  std::vector<std::string> inputs_;
  std::vector<std::pair<std::string, std::string>> destinations_;  // option, path: no two the same
  std::string out_dir_;
  IsOutputFile is_output_;
  std::string staging_dir_;
  std::vector<std::string> created_;  // folders made for the outputs, outermost first
  std::vector<std::unique_ptr<RemovedOnInterruption>> removals_;
  std::vector<std::string> files_;
  std::vector<std::unique_ptr<StagedFile>> outside_;
  bool committed_ = false;
};

}  // namespace semsim
