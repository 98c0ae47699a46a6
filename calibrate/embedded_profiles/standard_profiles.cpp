// The profiles embedded in the binary: each device preset's datasheet profile (YAML, a kilobyte) and
// the measured profiles, packed at build time from calibrate/profiles/*-measured.yaml
// (calibrate/format/pack_profile_main.cpp writes packed_profiles()).
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/format/derived_profile.hpp"
#include "calibrate/format/profile.hpp"
#include "calibrate/format/profile_pack.hpp"
#include "models/presets.hpp"

namespace semsim {
namespace profiles_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
const std::vector<std::pair<std::string_view, std::string_view>>& packed_profiles();  // {device, bytes}
}  // namespace profiles_data

namespace {

// The embedded file `name` (or packed profile of device `name`) in `files`, or nothing.
std::optional<std::string_view> embedded_profile(
    const std::vector<std::pair<std::string_view, std::string_view>>& files, const std::string& name) {
  for (const auto& [file, text] : files)
    if (file == name) return text;
  return std::nullopt;
}

// Devices without measurements of their own but of the same silicon as a measured one: their measured
// profile is that one's, derived for their links (calibrate/format/derived_profile.hpp).
constexpr std::pair<std::string_view, std::string_view> kSameSilicon[] = {{"h800-sxm", "h100-sxm"}};

}  // namespace

CalibrationProfile CalibrationProfile::datasheet(const Device& device) {
  const std::string wanted = device.name + "-datasheet.yaml";
  if (const auto text = embedded_profile(profiles_data::embedded_files(), wanted))
    return from_yaml(YamlInput::parse(std::string(*text), "<profile " + wanted + ">"), device, {});
  CalibrationProfile p;
  p.name = "datasheet:" + device.name;
  p.device = device.name;
  return p;
}

std::shared_ptr<const CalibrationProfile> CalibrationProfile::measured(const Device& device) {
  const auto same = std::find_if(std::begin(kSameSilicon), std::end(kSameSilicon),
                                 [&](const auto& pair) { return pair.first == device.name; });
  if (same != std::end(kSameSilicon)) {
    const Device source = load_device(
        YamlInput(YAML::Node(std::string(same->second)), std::make_shared<const std::string>("embedded"), ""),
        ".");
    const auto measured_source = measured(source);
    if (!measured_source) return nullptr;
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const CalibrationProfile>> derived;
    const std::lock_guard lock(mutex);
    auto at = derived.find(device.name);
    if (at == derived.end())
      at = derived
               .emplace(device.name, std::make_shared<const CalibrationProfile>(
                                         derive_profile(*measured_source, source, device)))
               .first;
    return at->second;
  }
  const auto packed = embedded_profile(profiles_data::packed_profiles(), device.name);
  if (!packed) return nullptr;
  // Megabytes, held by every scenario of a sweep: unpacked once per device name and process.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CalibrationProfile>> unpacked;
  const std::lock_guard lock(mutex);
  auto at = unpacked.find(device.name);
  if (at == unpacked.end())
    at = unpacked.emplace(device.name, std::make_shared<const CalibrationProfile>(unpack_profile(*packed)))
             .first;
  return at->second;
}

std::string CalibrationProfile::measured_file(const Device& device) {
  const auto same = std::find_if(std::begin(kSameSilicon), std::end(kSameSilicon),
                                 [&](const auto& pair) { return pair.first == device.name; });
  const std::string measured_device(same != std::end(kSameSilicon) ? same->second : device.name);
  return "calibrate/profiles/" + measured_device + "-measured.yaml";
}

std::shared_ptr<const CalibrationProfile> CalibrationProfile::standard(const Device& device) {
  if (auto profile = measured(device)) return profile;
  return std::make_shared<const CalibrationProfile>(datasheet(device));
}

CalibrationProfile CalibrationProfile::from_yaml(const YamlInput& in, const Device& device) {
  return from_yaml(in, device, datasheet(device));
}

}  // namespace semsim
