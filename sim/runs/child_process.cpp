#include "sim/runs/child_process.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>

#include "models/interruption.hpp"

namespace semsim {
namespace {

// waitpid, again when a signal interrupts it; false when `pid` is no child of this process.
bool reap(pid_t pid, int& status) {
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return false;
  return true;
}

}  // namespace

ChildProcess ChildProcess::fork(const std::function<int()>& child_main) {
  std::fflush(nullptr);  // do not duplicate buffered output into the child
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork() failed: ") + std::strerror(errno));
  if (pid > 0) {
    kill_child_on_interruption(pid);
    return ChildProcess(pid);
  }
  restore_signals_in_child();
  // A child whose parent was killed has no one to report to: end it too (also across exec).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  int code = 1;
  try {
    code = child_main();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "semsim: child process: %s\n", e.what());
  }
  std::fflush(nullptr);
  ::_exit(code);
}

ChildProcess ChildProcess::run_program(const std::vector<std::string>& argv) {
  // Built before forking: the child only calls exec.
  std::vector<std::string> storage = argv;
  std::vector<char*> pointers;
  for (std::string& arg : storage) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  return fork([&] {
    ::execvp(pointers[0], pointers.data());
    std::fprintf(stderr, "semsim: cannot run %s: %s\n", pointers[0], std::strerror(errno));
    return 127;
  });
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  std::swap(pid_, other.pid_);
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int ignored = 0;
  reap(pid_, ignored);
  forget_child(pid_);
}

ExitStatus ChildProcess::wait() {
  if (pid_ <= 0) throw std::logic_error("ChildProcess::wait: no child (already waited for?)");
  int status = 0;
  const pid_t pid = std::exchange(pid_, -1);
  const bool reaped = reap(pid, status);
  forget_child(pid);
  if (!reaped) throw std::runtime_error(std::string("waitpid() failed: ") + std::strerror(errno));
  if (WIFSIGNALED(status)) return {0, WTERMSIG(status)};
  return {WEXITSTATUS(status), 0};
}

}  // namespace semsim
