#include "sim/cli/isolated_process.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

ChildProcess ChildProcess::start(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed");
  std::fflush(nullptr);  // do not duplicate buffered output into the child
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork() failed");
  }
  if (pid == 0) {
    // A simulation whose parent was killed has no one to report to: end it too.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
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
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  return ChildProcess(pid, fds[0]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), fd_(std::exchange(other.fd_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  std::swap(pid_, other.pid_);
  std::swap(fd_, other.fd_);
  return *this;
}

ChildProcess::~ChildProcess() {
  if (fd_ >= 0) ::close(fd_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    reap(pid_);
  }
}

std::string ChildProcess::wait() {
  const std::string framed = read_all(fd_);
  ::close(std::exchange(fd_, -1));
  const int status = reap(std::exchange(pid_, -1));
  if (framed.empty()) {
    if (WIFSIGNALED(status))
      throw std::runtime_error("simulation process died with signal " + std::to_string(WTERMSIG(status)));
    throw std::runtime_error("simulation process exited with status " + std::to_string(WEXITSTATUS(status)) +
                             " without a result");
  }
  const std::string text = framed.substr(1);
  if (framed[0] == 'I') throw InputError(text);
  if (framed[0] == 'E') throw std::runtime_error(text);
  return text;
}

std::string run_isolated(const std::function<std::string()>& body) {
  return ChildProcess::start(body).wait();
}

}  // namespace semsim
