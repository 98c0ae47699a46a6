#include "sim/cli/plot_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "models/input_error.hpp"

namespace semsim {
namespace plot_script_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
}

int run_plot_script(const std::string& sweep_dir, const std::vector<std::string>& script_args) {
  if (!std::filesystem::exists(std::filesystem::path(sweep_dir) / "points.csv"))
    throw InputError(sweep_dir + ": no points.csv here (plot takes the --out folder of semsim sweep)");
  const std::string script(plot_script_data::embedded_files().front().second);
  std::vector<std::string> args{"python3", "-c", script, sweep_dir};
  args.insert(args.end(), script_args.begin(), script_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork() failed");
  if (pid == 0) {
    ::execv("/usr/bin/python3", argv.data());
    ::execvp("python3", argv.data());
    std::perror("semsim plot: cannot run python3");
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace semsim
