#pragma once
// Helpers shared by the simulator tests: chips by name from the source tree, scenarios from
// text written to a temporary file.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/hw_spec.h"
#include "sim/card_sim.h"
#include "sim/scenario.h"

namespace npusim::test {

inline HwSpec chip(const std::string& name) {
  return load_hw_spec(
      resolve_hw_spec(name, {std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs"}));
}

/// Writes `text` to a fresh file in a per-process temp folder and returns its path.
inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("npusim_sim_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  return p;
}

/// Loads a scenario given as text (relative file names resolve against the temp folder).
inline sim::Scenario scenario_from_text(const std::string& text,
                                        const std::vector<std::string>& sets = {}) {
  static int counter = 0;
  return sim::load_scenario(write_temp("scenario_" + std::to_string(counter++) + ".toml", text),
                            sets);
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::filesystem::path data(const std::string& rel) {
  return std::filesystem::path(NPUSIM_TEST_DATA_DIR) / rel;
}

}  // namespace npusim::test
