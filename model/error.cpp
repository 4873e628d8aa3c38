#include "model/error.h"

#include <fmt/format.h>

namespace npusim {

std::string format_diagnostic(const SourcePos& pos, const std::string& what, const char* severity) {
  std::string out = pos.file.empty() ? std::string("<input>") : pos.file;
  if (pos.line > 0) {
    out += fmt::format(":{}", pos.line);
    if (pos.column > 0) out += fmt::format(":{}", pos.column);
  }
  return fmt::format("{}: {}: {}", out, severity, what);
}

InputError::InputError(SourcePos pos, const std::string& what)
    : std::runtime_error(format_diagnostic(pos, what)), pos_(std::move(pos)), detail_(what) {}

void throw_internal(const char* file, int line, const char* expr) {
  throw InternalError(fmt::format("{}:{}: internal error: check failed: {}", file, line, expr));
}

}  // namespace npusim
