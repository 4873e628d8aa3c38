#pragma once
// Errors that cross library boundaries. Libraries throw, only main() catches
// (CONVENTIONS.md "Errors").

#include <cstdint>
#include <stdexcept>
#include <string>

namespace npusim {

/// Where in a user's file something was found; line and column are 1-based, 0 = unknown.
struct SourcePos {
  std::string file;      ///< path as the user gave it, or "<command line>"
  std::uint32_t line = 0;
  std::uint32_t column = 0;
};

/// Where an error in a command-line argument is reported.
inline const SourcePos kCommandLine{"<command line>", 0, 0};

/// Bad user input: printed like a compiler diagnostic,
/// `file:line:col: error: what`, exit code 2, nothing written.
class InputError : public std::runtime_error {
 public:
  InputError(SourcePos pos, const std::string& what);
  /// The position of the defect.
  [[nodiscard]] const SourcePos& pos() const noexcept { return pos_; }
  /// The message without the position prefix.
  [[nodiscard]] const std::string& detail() const noexcept { return detail_; }

 private:
  SourcePos pos_;
  std::string detail_;
};

/// Formats `file:line:col: error: what` (line and col omitted when unknown).
[[nodiscard]] std::string format_diagnostic(const SourcePos& pos, const std::string& what,
                                            const char* severity = "error");

/// A broken internal invariant (a bug in npusim, not in the input). Stays on in release builds.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void throw_internal(const char* file, int line, const char* expr);

}  // namespace npusim

/// Internal invariant check that is never compiled out; throws InternalError with __FILE__:__LINE__.
#define NPUSIM_CHECK(expr) \
  ((expr) ? static_cast<void>(0) : ::npusim::throw_internal(__FILE__, __LINE__, #expr))
