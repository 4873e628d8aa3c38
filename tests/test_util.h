#pragma once
// Helpers several test files share. Defined once here rather than in each file's anonymous
// namespace, so the test files can be compiled together as unity files (NPUSIM_UNITY_TESTS).

#include <filesystem>
#include <string>

#include "tests/test_paths.h"

namespace npusim::test {

/// A scenario bundled with the sources: scenarios/NAME.toml.
inline std::filesystem::path bundled_scenario(const std::string& name) {
  return std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / (name + ".toml");
}

/// A deliberately broken input under tests/data/bad/.
inline std::string bad_file(const std::string& name) {
  return (std::filesystem::path(NPUSIM_TEST_DATA_DIR) / "bad" / name).string();
}

}  // namespace npusim::test
