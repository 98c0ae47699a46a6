#pragma once
// What every output names its maker by: "0.1.0 (git 62d224d12ab3)" in a git checkout, the project
// version alone elsewhere (defined in a file the build generates: cmake/WriteVersion.cmake).
namespace semsim {

const char* semsim_version();

}  // namespace semsim
