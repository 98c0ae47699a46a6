#pragma once
// SimGrid allows one Engine per process, so every simulation runs in a forked child. The child
// returns a byte payload through a pipe; errors come back with their kind so the CLI keeps its
// exit codes (InputError -> 2, anything else -> 1).
#include <functional>
#include <string>

#include "sim/runs/child_process.hpp"

namespace semsim {

// A body running in a forked child (which dies with its parent). Several can run at once: poll()
// their result_fd() and collect each with wait().
class IsolatedProcess {
 public:
  static IsolatedProcess start(const std::function<std::string()>& body);
  IsolatedProcess(IsolatedProcess&& other) noexcept;
  IsolatedProcess& operator=(IsolatedProcess&& other) noexcept;
  IsolatedProcess(const IsolatedProcess&) = delete;
  IsolatedProcess& operator=(const IsolatedProcess&) = delete;
  ~IsolatedProcess();  // kills and reaps a child that was never waited for

  int result_fd() const { return fd_; }  // readable once the child has sent its result or died
  // Reads what the body returned and reaps the child. Rethrows an InputError raised by the body as
  // InputError, anything else (a crash included) as std::runtime_error.
  std::string wait();

 private:
  IsolatedProcess(ChildProcess child, int fd) : child_(std::move(child)), fd_(fd) {}
  ChildProcess child_;
  int fd_ = -1;
};

// Runs `body` in a child process and returns what it returned. Never creates an Engine here.
std::string run_isolated(const std::function<std::string()>& body);

}  // namespace semsim
