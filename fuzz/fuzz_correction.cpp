// libFuzzer harness: a learned correction file (model/correction_io.cpp), as `npusim calibrate
// --correction-out` writes it and `accuracy` / `predict --correction` read it; a file that reads
// is applied to one row.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/correction.h"
#include "model/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const npusim::Correction c = npusim::Correction::parse(text, "correction.txt");
    npusim::CorrectionFeatures x{};
    x[0] = 1;  // a cube row of all-zero features
    (void)c.apply({x});
  } catch (const npusim::InputError&) {
  }
  return 0;
}
