#pragma once
// Shared by the libFuzzer harnesses (fuzz/README.md). The readers under test take file paths, as
// the CLI gives them, so each input is first written to a file in a scratch folder of this
// process (under /dev/shm when it exists, so no disk I/O per execution).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace npusim::fuzz {

/// This process's scratch folder, created on first use and removed at exit.
[[nodiscard]] const std::filesystem::path& scratch_dir();

/// Writes `size` bytes of `data` to scratch_dir()/`name` (replacing it) and returns the path.
std::filesystem::path write_file(const std::string& name, const std::uint8_t* data,
                                 std::size_t size);
/// Same for text.
std::filesystem::path write_file(const std::string& name, std::string_view text);

/// The repository's root (hw_specs/, scenarios/), compiled in by CMake.
[[nodiscard]] std::filesystem::path source_dir();

}  // namespace npusim::fuzz
