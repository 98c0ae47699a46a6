#pragma once
// One name table per enumeration a scenario chooses from: what its YAML reads, what outputs and
// messages write, in one place each (as sim/phase.hpp names the phases). A table lists every
// value once, in the order help and error messages list the names.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"

namespace semsim {

template <typename Enum>
struct ChoiceName {
  Enum value;
  const char* name;
};

template <typename Enum, std::size_t N>
using ChoiceNames = std::array<ChoiceName<Enum>, N>;

template <typename Enum, std::size_t N>
constexpr const char* name_of(const ChoiceNames<Enum, N>& table, Enum value) {
  for (const ChoiceName<Enum>& entry : table)
    if (entry.value == value) return entry.name;
  throw std::logic_error("a value missing from its name table");
}

template <typename Enum, std::size_t N>
std::vector<std::string> names_of(const ChoiceNames<Enum, N>& table) {
  std::vector<std::string> names;
  for (const ChoiceName<Enum>& entry : table) names.emplace_back(entry.name);
  return names;
}

// The value of `name`, one of the table's names (checked before: a CLI option's IsMember).
template <typename Enum, std::size_t N>
Enum value_of(const ChoiceNames<Enum, N>& table, const std::string& name) {
  for (const ChoiceName<Enum>& entry : table)
    if (entry.name == name) return entry.value;
  throw std::logic_error("a name missing from its name table: " + name);
}

// The value `in` names; an InputError at `in` listing the names otherwise.
template <typename Enum, std::size_t N>
Enum read_choice(const YamlInput& in, const ChoiceNames<Enum, N>& table) {
  return value_of(table, in.as_choice(names_of(table)));
}

}  // namespace semsim
