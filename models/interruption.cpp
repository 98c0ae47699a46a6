#include "models/interruption.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace semsim {
namespace {

struct Registry {
  // Recursive: the commit that holds interruptions back unregisters what it puts in place.
  std::recursive_mutex mutex;
  std::map<std::uint64_t, std::pair<std::string, RemovedOnInterruption::Kind>> paths;  // ids increase
  std::uint64_t next_id = 0;
  std::set<pid_t> children;
};

// Never destroyed: the signal thread may still use it while the process exits.
Registry& registry() {
  static Registry* const instance = new Registry();
  return *instance;
}

sigset_t interruption_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal);
  return signals;
}

void remove(const std::string& path, RemovedOnInterruption::Kind kind) {
  std::error_code ignored;
  switch (kind) {
    case RemovedOnInterruption::Kind::kFile:
    case RemovedOnInterruption::Kind::kEmptyFolder:  // remove() leaves a folder that is not empty
      std::filesystem::remove(path, ignored);
      break;
    case RemovedOnInterruption::Kind::kTree:
      std::filesystem::remove_all(path, ignored);
      break;
  }
}

// In the signal thread: undoes what the process had not finished, then ends it with `signal`.
[[noreturn]] void end_interrupted(int signal) {
  Registry& r = registry();
  r.mutex.lock();  // never unlocked: the main thread stops at its next use of the registry
  for (const pid_t pid : r.children) ::kill(pid, SIGKILL);
  for (const pid_t pid : r.children) {  // dead, and left for the main thread to reap
    siginfo_t info;
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
  }
  // The latest first: staged files before the folders holding them.
  for (auto it = r.paths.rbegin(); it != r.paths.rend(); ++it) remove(it->second.first, it->second.second);
  const std::string message = std::string("semsim: interrupted (") + ::strsignal(signal) +
                              "); removed the outputs it had not finished\n";
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  // Ends as the signal would have: the shell sees 128 + its number.
  ::signal(signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  ::raise(signal);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::_exit(128 + signal);
}

}  // namespace

void handle_interruptions() {
  ::signal(SIGXFSZ, SIG_IGN);
  const sigset_t signals = interruption_signals();
  // Blocked in every thread (they inherit this mask), so that only the thread below takes them.
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals] {
    int signal = 0;
    while (::sigwait(&signals, &signal) != 0) {
    }
    end_interrupted(signal);
  }).detach();
}

void restore_signals_in_child() {
  const sigset_t signals = interruption_signals();
  ::pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
}

RemovedOnInterruption::RemovedOnInterruption(std::string path, Kind kind) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  id_ = r.next_id++;
  r.paths.emplace(id_, std::pair(std::move(path), kind));
}

RemovedOnInterruption::~RemovedOnInterruption() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.paths.erase(id_);
}

void kill_child_on_interruption(pid_t pid) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.children.insert(pid);
}

void forget_child(pid_t pid) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.children.erase(pid);
}

InterruptionsHeldBack::InterruptionsHeldBack() {
  registry().mutex.lock();
}

InterruptionsHeldBack::~InterruptionsHeldBack() {
  registry().mutex.unlock();
}

void wait_if_interrupted() {
  const std::lock_guard lock(registry().mutex);
}

}  // namespace semsim
