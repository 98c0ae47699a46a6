#pragma once
// Reading and writing text that may be gzip-compressed (a file starting with gzip's magic bytes is
// decompressed, any other is read as it is). Every failure, including truncated or corrupt
// compressed data and bytes after the last gzip member, is an InputError naming the file.
#include <zlib.h>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "models/input_error.hpp"
#include "models/input_limits.hpp"

namespace semsim {

// What is at a path named by an input, never throwing: a name too long, a loop of links or a folder
// that may not be searched count as nothing there, so the caller's "does not exist" error names it
// (std::filesystem's one-argument forms throw on those).
bool path_exists(const std::filesystem::path& path);
bool is_file(const std::filesystem::path& path);
bool is_folder(const std::filesystem::path& path);
// Why an input named by `path` cannot be read as a file ("does not exist", "is a folder, not a file",
// "is not a regular file ..."), or nothing when it is a regular file.
std::optional<std::string> why_not_a_regular_file(const std::filesystem::path& path);

// A descriptor open for reading `path`, which must be a regular file: InputError naming it otherwise
// ("is a directory", "not a regular file": a FIFO or device would block or never end). Opened
// without blocking and then checked, so nothing waits on a FIFO's writer.
int open_regular_file(const std::string& path);

// The whole (decompressed) content of `path`; more than `max_bytes` of it is an InputError.
std::string read_text_file(const std::string& path, std::size_t max_bytes = limits::kTextFileBytes);

class ChunkReader;

// Line-by-line streaming over a plain or gzip file; lines are returned without their '\n' (and '\r'),
// the first without a UTF-8 byte-order mark.
// A line longer than limits::kLineBytes is an InputError naming the file and line.
class LineReader {
 public:
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, valid until the following call; false at the end of the file.
  bool next(std::string_view& line);
  int line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  bool refill();

  std::string path_;
  std::unique_ptr<ChunkReader> file_;
  std::string buffer_;
  std::size_t begin_ = 0;    // start of the unread part of buffer_
  std::size_t scanned_ = 0;  // buffer_[begin_, scanned_) holds no '\n': each byte is searched once
  bool at_end_ = false;
  int line_number_ = 0;
};

// Writes text through zlib: gzip-compressed when `path` ends in ".gz", plain otherwise.
class TextWriter {
 public:
  explicit TextWriter(const std::string& path);
  ~TextWriter();
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  std::string& buffer() { return pending_; }  // append here; flushed in large blocks
  void flush_if_large();
  void close();  // flushes everything; throws on any write error

 private:
  void write_pending();

  std::string path_;
  gzFile file_ = nullptr;
  std::string pending_;
};

// Removes the entries of `folder` named `prefix` + PID + `suffix` whose process no longer runs: what
// a writer killed before its rename left. A live process's entries are its own, still being written.
void remove_leftovers_of_dead_processes(const std::filesystem::path& folder, const std::string& prefix,
                                        const std::string& suffix = "");

}  // namespace semsim
