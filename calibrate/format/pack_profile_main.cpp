// semsim_pack_profile DEVICE DATASHEET.yaml MEASURED.yaml OUT.json: the build step that packs a
// measured profile for embedding (calibrate/format/profile_pack.hpp). The profile file is read and checked
// as `--calibration FILE` would read it, over the device's datasheet profile: a profile with an
// error fails the build, naming the file, line and key.
#include <cstdio>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string>

#include "calibrate/format/profile.hpp"
#include "calibrate/format/profile_pack.hpp"
#include "models/presets.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s DEVICE DATASHEET.yaml MEASURED.yaml OUT.json\n", argv[0]);
    return 2;
  }
  try {
    using semsim::CalibrationProfile;
    using semsim::YamlInput;
    const semsim::Device device = semsim::load_device(YamlInput::parse(argv[1], "<device>"), "");
    const CalibrationProfile datasheet =
        CalibrationProfile::from_yaml(YamlInput::load_file(argv[2]), device, {});
    const CalibrationProfile measured =
        CalibrationProfile::from_yaml(YamlInput::load_file(argv[3]), device, datasheet);
    std::ofstream out(argv[4], std::ios::binary);
    out << semsim::pack_profile(measured);
    if (!out.flush()) throw std::runtime_error(std::string("cannot write ") + argv[4]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "semsim_pack_profile: %s\n", e.what());
    return 2;
  }
  return 0;
}
