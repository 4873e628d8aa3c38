#pragma once
// Small text helpers shared by the readers of hand-written values (shape templates, --vary
// lists, graph rewrites). Profile fields have their own trimming (op_desc.cpp also strips the
// quotes and carriage returns profiles leave).

#include <string_view>

namespace npusim {

/// `s` without leading and trailing spaces and tabs.
[[nodiscard]] inline std::string_view trim_blanks(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace npusim
