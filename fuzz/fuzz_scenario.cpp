// libFuzzer harness: a scenario file through load_scenario and load_scenario_hw (the chip is
// looked up in the repository's hw_specs/). Simulation is not run: a valid scenario may
// legitimately ask for hours of simulated traffic.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::filesystem::path> hw_dirs{npusim::fuzz::source_dir() /
                                                          "hw_specs"};
  const auto file = npusim::fuzz::write_file("scenario.toml", data, size);
  try {
    const npusim::sim::Scenario s = npusim::sim::load_scenario(file);
    (void)npusim::sim::load_scenario_hw(s, hw_dirs);
  } catch (const npusim::InputError&) {
  }
  return 0;
}
