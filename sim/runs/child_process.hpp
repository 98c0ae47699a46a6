#pragma once
// The one way semsim starts other processes: a forked copy of itself running a function (a
// simulation, see isolated_process.hpp) or a program (the plot script's interpreter, the
// calibration microbenchmarks). Every child dies with semsim, however semsim ends, so that a killed
// sweep or command leaves nothing running.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace semsim {

struct ExitStatus {
  int code = 0;    // what the child exited with, when it exited
  int signal = 0;  // the signal that ended it, else 0
  int shell_code() const { return signal != 0 ? 128 + signal : code; }  // as a shell reports it
};

class ChildProcess {
 public:
  // Forks; the child runs `child_main` and exits with what it returns (1, said on stderr, when it
  // throws), never returning into the caller's code.
  static ChildProcess fork(const std::function<int()>& child_main);
  // Runs `argv`, its first element a path or a name looked up on PATH, with this process's standard
  // streams. A program that cannot be started exits with 127 after saying why on stderr.
  static ChildProcess run_program(const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // kills and reaps a child that was never waited for

  ExitStatus wait();  // blocks until the child ends, and reaps it

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

}  // namespace semsim
