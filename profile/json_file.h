#pragma once
// Reading a whole JSON file with the errors every profile JSON reader gives.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace npusim::profile {

/// Parses `file` as JSON. An unreadable file, or malformed JSON at its line, is an InputError.
[[nodiscard]] nlohmann::json read_json_file(const std::filesystem::path& file);

}  // namespace npusim::profile
