#pragma once
// Reading a kernel shape ("mla heads=16 kv_lora=512 ..." as kernel_shape() writes it): shared by the
// fitter and the microbenchmarks, which build without the rest of the project.
#include <optional>
#include <sstream>
#include <string>

namespace semsim {

// The value of `key=` in `shape`, if it has one.
inline std::optional<long long> shape_value(const std::string& shape, const std::string& key) {
  std::istringstream words(shape);
  for (std::string word; words >> word;)
    if (word.size() > key.size() && word.starts_with(key) && word[key.size()] == '=')
      return std::stoll(word.substr(key.size() + 1));
  return std::nullopt;
}

// Whether `shape` has the bare word `word` (e.g. "mla").
inline bool shape_has_word(const std::string& shape, const std::string& word) {
  std::istringstream words(shape);
  for (std::string w; words >> w;)
    if (w == word) return true;
  return false;
}

}  // namespace semsim
