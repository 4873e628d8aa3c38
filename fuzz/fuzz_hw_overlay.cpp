// libFuzzer harness: a calibration overlay applied to a real chip file (load_hw_spec's
// `overlays`), as `npusim calibrate` writes them and `--overlay` reads them.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "model/hw_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto chip = npusim::fuzz::source_dir() / "hw_specs" / "ascend910b3.toml";
  const auto file = npusim::fuzz::write_file("overlay.toml", data, size);
  try {
    const npusim::HwSpec hw = npusim::load_hw_spec(chip, {file});
    (void)hw.hbm_bytes_per_us();
  } catch (const npusim::InputError&) {
  }
  return 0;
}
