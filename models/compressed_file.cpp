#include "models/compressed_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "models/input_error.hpp"

namespace semsim {

bool path_exists(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored);
}

bool is_file(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored);
}

bool is_folder(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::is_directory(path, ignored);
}

std::optional<std::string> why_not_a_regular_file(const std::filesystem::path& path) {
  if (is_file(path)) return std::nullopt;
  if (is_folder(path)) return "is a folder, not a file";
  if (path_exists(path)) return "is not a regular file (a FIFO, device or socket is not read)";
  return "does not exist";
}

int open_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open file" + (errno == ENOENT ? " (no such file)" : ""));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || ::fcntl(fd, F_SETFL, 0) != 0) {
    const bool folder = S_ISDIR(status.st_mode);
    ::close(fd);
    throw InputError(path + (folder ? ": is a directory, not a file"
                                    : ": is not a regular file (a FIFO, device or socket is not read)"));
  }
  return fd;
}

namespace {

constexpr unsigned kChunk = 1 << 20;

}  // namespace

// The content of a plain or gzip file in chunks. Gzip members are inflated one after another
// (concatenated members are one stream, as gzip reads them); anything after the last member is an
// error rather than ignored, as are a member cut short and corrupt data.
class ChunkReader {
 public:
  explicit ChunkReader(const std::string& path) : path_(path) {
    const int fd = open_regular_file(path);
    file_ = ::fdopen(fd, "rb");
    if (file_ == nullptr) {
      ::close(fd);
      throw InputError(path + ": cannot open file");
    }
    try {
      fill_input();
    } catch (...) {
      std::fclose(file_);
      throw;
    }
    gzip_ = available_ >= 2 && input_[0] == kGzipMagic[0] && input_[1] == kGzipMagic[1];
    if (gzip_ && inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      std::fclose(file_);
      throw InputError(path + ": cannot start decompressing");
    }
  }
  ~ChunkReader() {
    if (gzip_) inflateEnd(&stream_);
    std::fclose(file_);
  }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Appends up to kChunk bytes of content to `out`; false at the end of the content.
  bool read(std::string& out) {
    const std::size_t old_size = out.size();
    out.resize(old_size + kChunk);
    char* into = out.data() + old_size;
    const std::size_t got = gzip_ ? inflate_into(into) : copy_into(into);
    out.resize(old_size + got);
    return got > 0;
  }

 private:
  static constexpr unsigned char kGzipMagic[2] = {0x1f, 0x8b};

  // Reads more of the file once what was read is used up; available_ stays 0 at its end.
  void fill_input() {
    if (available_ > 0 || at_eof_) return;
    next_ = 0;
    available_ = std::fread(input_, 1, sizeof input_, file_);
    if (std::ferror(file_)) throw InputError(path_ + ": read error");
    at_eof_ = available_ < sizeof input_;
  }

  void consume(std::size_t n) {
    next_ += n;
    available_ -= n;
  }

  std::size_t copy_into(char* out) {
    std::size_t got = 0;
    while (got < kChunk) {
      fill_input();
      if (available_ == 0) break;
      const std::size_t n = std::min<std::size_t>(available_, kChunk - got);
      std::copy_n(input_ + next_, n, out + got);
      consume(n);
      got += n;
    }
    return got;
  }

  std::size_t inflate_into(char* out) {
    stream_.next_out = reinterpret_cast<Bytef*>(out);
    stream_.avail_out = kChunk;
    while (stream_.avail_out > 0) {
      fill_input();
      if (member_ended_) {
        if (available_ == 0) break;  // the last member ended with the file
        // Another member starts with the magic (inflate checks the rest of its header).
        if (input_[next_] != kGzipMagic[0])
          throw InputError(path_ + ": data after the end of the gzip stream (a corrupt or appended-to file)");
        inflateReset(&stream_);
        member_ended_ = false;
      }
      if (available_ == 0)
        throw InputError(path_ + ": corrupt or truncated compressed data (unexpected end of file)");
      stream_.next_in = input_ + next_;
      stream_.avail_in = static_cast<uInt>(available_);
      const int status = inflate(&stream_, Z_NO_FLUSH);
      consume(available_ - stream_.avail_in);
      if (status == Z_STREAM_END)
        member_ended_ = true;
      else if (status != Z_OK)
        throw InputError(path_ + ": corrupt or truncated compressed data (" +
                         (stream_.msg != nullptr ? stream_.msg : "inflate failed") + ")");
    }
    return kChunk - stream_.avail_out;
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  bool gzip_ = false;
  z_stream stream_{};
  bool member_ended_ = false;
  unsigned char input_[1 << 16];
  std::size_t next_ = 0, available_ = 0;
  bool at_eof_ = false;
};

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  ChunkReader file(path);
  std::string text;
  while (file.read(text))
    if (text.size() > max_bytes)
      throw InputError(fmt::format("{}: larger than {} MiB (the most semsim reads of such a file)", path,
                                   max_bytes >> 20));
  return text;
}

LineReader::LineReader(const std::string& path) : path_(path), file_(std::make_unique<ChunkReader>(path)) {}

LineReader::~LineReader() = default;

bool LineReader::refill() {
  buffer_.erase(0, begin_);
  scanned_ -= begin_;
  begin_ = 0;
  if (!at_end_ && !file_->read(buffer_)) at_end_ = true;
  return !at_end_;
}

bool LineReader::next(std::string_view& line) {
  auto check_length = [&](std::size_t length) {
    if (length > limits::kLineBytes)
      throw InputError(fmt::format("{}:{}: line longer than {} MiB (the most semsim reads)", path_,
                                   line_number_ + 1, limits::kLineBytes >> 20));
  };
  std::size_t newline;
  while ((newline = buffer_.find('\n', scanned_)) == std::string::npos) {
    scanned_ = buffer_.size();
    check_length(scanned_ - begin_);
    if (!refill()) {
      if (begin_ == buffer_.size()) return false;
      newline = buffer_.size();  // a last line without '\n'
      break;
    }
  }
  check_length(newline - begin_);
  std::size_t end = newline;
  if (end > begin_ && buffer_[end - 1] == '\r') --end;
  line = std::string_view(buffer_).substr(begin_, end - begin_);
  begin_ = scanned_ = std::min(newline + 1, buffer_.size());
  // A UTF-8 byte-order mark (spreadsheets write one before a CSV's header) is no part of the text.
  if (++line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
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
    throw InputError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  pending_.clear();
}

void TextWriter::flush_if_large() {
  if (pending_.size() >= kChunk) write_pending();
}

void TextWriter::close() {
  write_pending();
  const int status = gzclose(file_);
  file_ = nullptr;
  if (status != Z_OK) throw InputError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
}

void remove_leftovers_of_dead_processes(const std::filesystem::path& folder, const std::string& prefix,
                                        const std::string& suffix) {
  std::error_code ignored;
  if (!std::filesystem::is_directory(folder, ignored)) return;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
      continue;
    const auto pid = parse_number(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()));
    if (!pid || *pid != static_cast<pid_t>(*pid) || *pid <= 0) continue;
    if (::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH)
      std::filesystem::remove_all(entry.path(), ignored);
  }
}

}  // namespace semsim
