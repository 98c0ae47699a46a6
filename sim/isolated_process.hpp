#pragma once
// SimGrid allows one Engine per process, so every simulation runs in a forked child. The child
// returns a byte payload through a pipe; errors come back with their kind so the CLI keeps its
// exit codes (InputError -> 2, anything else -> 1).
#include <functional>
#include <string>

namespace semsim {

// Runs `body` in a child process and returns what it returned. Rethrows an InputError raised by
// the child as InputError, anything else as std::runtime_error. Never creates an Engine here.
std::string run_isolated(const std::function<std::string()>& body);

}  // namespace semsim
