#include "frontend/import.h"

#include <fmt/format.h>

namespace npusim::frontend {

std::string format_warning(const ImportWarning& w) {
  return fmt::format("{} [{}]", w.message, w.code);
}

}  // namespace npusim::frontend
