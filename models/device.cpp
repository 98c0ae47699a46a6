#include "models/device.hpp"

namespace semsim {

Device Device::from_yaml(const YamlInput& in) {
  in.expect_map({"kind", "name", "display_name", "source", "bf16_flops", "fp8_flops", "fp4_flops",
                 "hbm_bytes", "reported_memory_mib", "hbm_bandwidth", "scaleup_bandwidth", "nic_bandwidth",
                 "compute_units", "communication_units", "notes"});
  if (in.required("kind").as_string() != "device") in.required("kind").fail("expected 'device'");
  Device d;
  d.name = in.required("name").as_string();
  d.display_name = in.get_string("display_name", d.name);
  d.source = in.required("source").as_string();
  d.bf16_flops = in.required("bf16_flops").as_double_in(limits::kFlopsPerSecond);
  // 0: no FP8 support.
  if (const auto fp8 = in.optional("fp8_flops"); fp8 && fp8->as_double() != 0)
    d.fp8_flops = fp8->as_double_in(limits::kFlopsPerSecond);
  // 0: no FP4 support (Blackwell's tensor cores run NVFP4 and MXFP4; Hopper's do not).
  if (const auto fp4 = in.optional("fp4_flops"); fp4 && fp4->as_double() != 0)
    d.fp4_flops = fp4->as_double_in(limits::kFlopsPerSecond);
  d.hbm_bytes = in.required("hbm_bytes").as_double_in(limits::kMemoryBytes);
  if (const auto reported = in.optional("reported_memory_mib"))
    d.reported_memory_mib = reported->as_double_in(limits::kMemoryBytes.min / Device::kMib,
                                                   limits::kMemoryBytes.max / Device::kMib);
  d.hbm_bandwidth = in.required("hbm_bandwidth").as_double_in(limits::kBytesPerSecond);
  d.scaleup_bandwidth = in.required("scaleup_bandwidth").as_double_in(limits::kBytesPerSecond);
  d.nic_bandwidth = in.required("nic_bandwidth").as_double_in(limits::kBytesPerSecond);
  d.compute_units = static_cast<int>(in.get_int_in("compute_units", 0, 1, 1 << 16));
  d.communication_units = static_cast<int>(in.get_int_in("communication_units", 0, 1, 1 << 16));
  if (d.communication_units > 0 && d.compute_units == 0)
    in.required("communication_units").fail("needs compute_units: the units it holds are a share of those");
  if (d.communication_units >= d.compute_units && d.compute_units > 0)
    in.required("communication_units").fail("must be fewer than compute_units");
  return d;
}

}  // namespace semsim
