#include "sim/runs/isolated_process.hpp"

#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <utility>

#include "models/input_error.hpp"

namespace semsim {
namespace {

// Payload framing: one status byte ('O' ok, 'I' input error, 'E' internal error) then the text.
void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

}  // namespace

IsolatedProcess IsolatedProcess::start(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
  try {
    ChildProcess child = ChildProcess::fork([&] {
      ::close(fds[0]);
      std::string framed;
      try {
        framed.assign(1, 'O').append(body());
      } catch (const InputError& e) {
        framed.assign(1, 'I').append(e.what());
      } catch (const std::exception& e) {
        framed.assign(1, 'E').append(e.what());
      }
      write_all(fds[1], framed);
      ::close(fds[1]);
      return 0;
    });
    ::close(fds[1]);
    return IsolatedProcess(std::move(child), fds[0]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
}

IsolatedProcess::IsolatedProcess(IsolatedProcess&& other) noexcept
    : child_(std::move(other.child_)), fd_(std::exchange(other.fd_, -1)) {}

IsolatedProcess& IsolatedProcess::operator=(IsolatedProcess&& other) noexcept {
  std::swap(child_, other.child_);
  std::swap(fd_, other.fd_);
  return *this;
}

IsolatedProcess::~IsolatedProcess() {
  if (fd_ >= 0) ::close(fd_);
}

std::string IsolatedProcess::wait() {
  const std::string framed = read_all(fd_);
  ::close(std::exchange(fd_, -1));
  const ExitStatus status = child_.wait();
  if (framed.empty()) {
    if (status.signal != 0)
      throw std::runtime_error("simulation process died with signal " + std::to_string(status.signal));
    throw std::runtime_error("simulation process exited with status " + std::to_string(status.code) +
                             " without a result");
  }
  const std::string text = framed.substr(1);
  if (framed[0] == 'I') throw InputError(text);
  if (framed[0] == 'E') throw std::runtime_error(text);
  return text;
}

std::string run_isolated(const std::function<std::string()>& body) {
  return IsolatedProcess::start(body).wait();
}

}  // namespace semsim
