#pragma once
// A structure-aware mutation for the YAML formats (scenarios, sweeps, calibration profiles): most
// mutations keep a valid document valid YAML and change one key or value — a value replaced by a
// boundary or wrong-typed one, a key removed, renamed or added — so the fuzzer explores what the
// validators see rather than what the YAML parser rejects. Inputs that are not a YAML map, and one
// mutation in four, get libFuzzer's byte-level mutations instead.
#include <cstddef>
#include <cstdint>

namespace semsim::fuzz {

// LLVMFuzzerCustomMutator's contract: mutates data[0, size) in place within max_size bytes and
// returns the new size.
std::size_t mutate_yaml(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed);

}  // namespace semsim::fuzz

// Makes a target use mutate_yaml.
#define SEMSIM_FUZZ_YAML_MUTATOR                                                                             \
  extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, \
                                                 unsigned int seed) {                                        \
    return semsim::fuzz::mutate_yaml(data, size, max_size, seed);                                            \
  }
