#pragma once
// Small text helpers shared by the readers of hand-written values (shape templates, --vary
// lists, graph rewrites) and the CSV writers. Profile fields have their own trimming (op_desc.cpp also strips the
// quotes and carriage returns profiles leave).

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npusim {

/// `s` without leading and trailing spaces and tabs.
[[nodiscard]] inline std::string_view trim_blanks(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// `s`, trimmed of blanks, as a whole int64 (false for empty text, trailing characters or
/// overflow; `out` is then unspecified).
[[nodiscard]] inline bool parse_int64(std::string_view s, std::int64_t& out) noexcept {
  s = trim_blanks(s);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

/// `s` split at every `sep`, each part trimmed of blanks ("a, b," gives "a", "b", "").
[[nodiscard]] inline std::vector<std::string> split_trimmed(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != sep) continue;
    out.emplace_back(trim_blanks(s.substr(start, i - start)));
    start = i + 1;
  }
  return out;
}

/// `s` as one CSV field (RFC 4180): quoted, with inner quotes doubled, when it holds a comma,
/// a quote or a newline; as it is otherwise.
[[nodiscard]] inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace npusim
