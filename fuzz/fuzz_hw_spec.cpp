// libFuzzer harness: a chip file (hw_specs/*.toml) through load_hw_spec.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "model/hw_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = npusim::fuzz::write_file("chip.toml", data, size);
  try {
    const npusim::HwSpec hw = npusim::load_hw_spec(file);
    (void)hw.peak_cube_tflops_fp16();
    (void)hw.hbm_bytes_per_us();
  } catch (const npusim::InputError&) {
  }
  return 0;
}
