#include "calibrate/profile.hpp"

namespace semsim {

CalibrationProfile CalibrationProfile::datasheet(const Device& device) {
  CalibrationProfile p;
  p.name = "datasheet:" + device.name;
  p.device = device.name;
  return p;
}

CalibrationProfile CalibrationProfile::from_yaml(const YamlInput& in, const Device& device) {
  in.expect_map({"kind", "version", "name", "source", "device", "efficiency", "overhead", "notes"});
  if (in.required("kind").as_string() != "profile") in.required("kind").fail("expected 'profile'");
  in.required("version").as_int_in(1, 1);
  CalibrationProfile p = datasheet(device);
  p.name = in.get_string("name", in.file());
  p.source = in.required("source").as_choice({"datasheet", "measured"});
  p.device = in.required("device").as_string();
  if (p.device != device.name)
    in.required("device").fail("profile is for '" + p.device + "' but the cluster's device is '" + device.name + "'");
  if (const auto eff = in.optional("efficiency")) {
    eff->expect_map({"gemm", "attention", "memory", "scaleup", "scaleout"});
    auto read = [&](const char* key, double& field) {
      if (const auto v = eff->optional(key)) field = v->as_double_in(0.01, 1.0);
    };
    read("gemm", p.gemm_efficiency);
    read("attention", p.attention_efficiency);
    read("memory", p.memory_efficiency);
    read("scaleup", p.scaleup_efficiency);
    read("scaleout", p.scaleout_efficiency);
  }
  if (const auto overhead = in.optional("overhead")) {
    overhead->expect_map({"kernel", "collective"});
    if (const auto v = overhead->optional("kernel")) p.kernel_overhead = v->as_double_in(0, 1e-2);
    if (const auto v = overhead->optional("collective")) p.collective_overhead = v->as_double_in(0, 1e-2);
  }
  return p;
}

}  // namespace semsim
