#pragma once
// What an interrupted semsim leaves: nothing it had not finished. SIGTERM, SIGINT and SIGHUP are
// taken by a thread of their own, which kills the child processes, removes every path registered
// here (files staged but not committed, the staging folders and the folders a command created for
// its outputs) and ends the process with the signal, so the shell sees 128 + its number. SIGKILL
// cannot be caught: what it leaves, the next run into the same place removes.
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace semsim {

// Once, first thing in main, before any other thread or child process: starts the thread that
// handles the three signals, and ignores SIGXFSZ, so that a write past `ulimit -f` fails with
// EFBIG and is reported like a full disk rather than killing the process mid-write.
void handle_interruptions();

// A forked child runs with the signals as a process normally has them (it dies of them).
void restore_signals_in_child();

// Registered for removal on an interruption while this object lives (and not released).
class RemovedOnInterruption {
 public:
  enum class Kind {
    kFile,         // removed
    kTree,         // removed with everything in it (a staging folder)
    kEmptyFolder,  // removed when empty (a folder made for outputs that never came)
  };
  RemovedOnInterruption(std::string path, Kind kind);
  ~RemovedOnInterruption();
  RemovedOnInterruption(const RemovedOnInterruption&) = delete;
  RemovedOnInterruption& operator=(const RemovedOnInterruption&) = delete;

 private:
  std::uint64_t id_;
};

// A child process, killed (and waited for) before the removals, so that it creates nothing after them.
void kill_child_on_interruption(pid_t pid);
void forget_child(pid_t pid);

// Runs `body` (renames that put outputs in place) with an interruption held back until it returns,
// so that the outputs are all in place or none is.
class InterruptionsHeldBack {
 public:
  InterruptionsHeldBack();
  ~InterruptionsHeldBack();
  InterruptionsHeldBack(const InterruptionsHeldBack&) = delete;
  InterruptionsHeldBack& operator=(const InterruptionsHeldBack&) = delete;
};

// Blocks forever while an interruption is being handled (it ends the process): the main thread calls
// it before it reports an error or exits, so that it says nothing about work the interruption undid.
void wait_if_interrupted();

}  // namespace semsim
