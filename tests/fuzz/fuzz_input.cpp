#include "tests/fuzz/fuzz_input.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "models/memory_budget.hpp"

namespace semsim::fuzz {

const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the folder runs after static destructors.
  static const std::string& dir = *[] {
    const char* tmp = std::getenv("TMPDIR");
    auto* pattern = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/semsim-fuzz-XXXXXX");
    if (!::mkdtemp(pattern->data())) std::abort();
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return pattern;
  }();
  return dir;
}

std::string write_scratch_file(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::vector<std::string> split_at_nul(std::string_view input, std::size_t parts) {
  std::vector<std::string> texts(parts);
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t nul = i + 1 < parts ? input.find('\0') : std::string_view::npos;
    texts[i] = input.substr(0, nul);
    input = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  }
  return texts;
}

NamedContent split_name_line(std::string_view input, const std::string& fallback) {
  const std::size_t newline = input.find('\n');
  const std::string_view line = input.substr(0, newline);
  const std::string_view rest =
      newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
  const bool plain = !line.empty() && line.size() <= 64 && line.front() != '.' &&
                     std::all_of(line.begin(), line.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                     });
  return {plain ? std::string(line) : fallback, rest};
}

void fit_memory_budget_to_fuzzer() {
  limit_memory_budget(1e9);
}

}  // namespace semsim::fuzz
