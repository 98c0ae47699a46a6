#include "models/compressed_file.hpp"

#include <filesystem>

#include "models/input_error.hpp"

namespace semsim {
namespace {

constexpr unsigned kChunk = 1 << 20;

gzFile open_for_reading(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw InputError(path + ": is a directory, not a file");
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw InputError(path + ": cannot open file");
  gzbuffer(file, kChunk);
  return file;
}

// Reads up to kChunk bytes appended to `out`; returns false at a clean end of data.
bool read_chunk(gzFile file, const std::string& path, std::string& out) {
  const std::size_t old_size = out.size();
  out.resize(old_size + kChunk);
  const int got = gzread(file, out.data() + old_size, kChunk);
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  if (got < 0 || (error != Z_OK && error != Z_STREAM_END))
    throw InputError(path + ": corrupt or truncated compressed data (" + message + ")");
  out.resize(old_size + static_cast<std::size_t>(got));
  return got > 0;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  gzFile file = open_for_reading(path);
  std::string text;
  try {
    while (read_chunk(file, path, text)) {
    }
  } catch (...) {
    gzclose(file);
    throw;
  }
  gzclose(file);
  return text;
}

LineReader::LineReader(const std::string& path) : path_(path), file_(open_for_reading(path)) {}

LineReader::~LineReader() {
  gzclose(file_);
}

bool LineReader::refill() {
  buffer_.erase(0, begin_);
  begin_ = 0;
  if (!at_end_ && !read_chunk(file_, path_, buffer_)) at_end_ = true;
  return !at_end_;
}

bool LineReader::next(std::string_view& line) {
  std::size_t newline;
  while ((newline = buffer_.find('\n', begin_)) == std::string::npos) {
    if (!refill()) {
      if (begin_ == buffer_.size()) return false;
      newline = buffer_.size();  // a last line without '\n'
      break;
    }
  }
  std::size_t end = newline;
  if (end > begin_ && buffer_[end - 1] == '\r') --end;
  line = std::string_view(buffer_).substr(begin_, end - begin_);
  begin_ = std::min(newline + 1, buffer_.size());
  ++line_number_;
  return true;
}

TextWriter::TextWriter(const std::string& path) : path_(path) {
  const bool compress = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  file_ = gzopen(path.c_str(), compress ? "wb6" : "wbT");
  if (file_ == nullptr) throw InputError(path + ": cannot create file");
}

TextWriter::~TextWriter() {
  if (file_ != nullptr) gzclose(file_);
}

void TextWriter::write_pending() {
  if (!pending_.empty() && gzwrite(file_, pending_.data(), static_cast<unsigned>(pending_.size())) !=
                               static_cast<int>(pending_.size()))
    throw InputError(path_ + ": write failed");
  pending_.clear();
}

void TextWriter::flush_if_large() {
  if (pending_.size() >= kChunk) write_pending();
}

void TextWriter::close() {
  write_pending();
  const int status = gzclose(file_);
  file_ = nullptr;
  if (status != Z_OK) throw InputError(path_ + ": write failed");
}

}  // namespace semsim
