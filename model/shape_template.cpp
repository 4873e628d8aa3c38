// Shape templates: the dimension grammar of graph files ("7", "B", "B*k", "k*B") and the
// operations on shape lists written with it (model/shape_template.h).
#include "model/shape_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "model/text.h"

namespace npusim {

namespace {

// One dimension of a template: "7", "B", "B*4", "4*B".
std::int64_t eval_dim(std::string_view dim, std::int64_t batch, const SourcePos& pos) {
  const std::string_view d = trim_blanks(dim);
  const auto t = parse_dim_template(d);
  if (!t) {
    throw InputError(pos, fmt::format("shape dimension '{}': expected a positive integer, B, "
                                      "B*k or k*B",
                                      d));
  }
  // plain integers pass through untouched (make_op validates them)
  if (!t->batch) return -1;
  if (t->k > std::numeric_limits<std::int64_t>::max() / batch) {
    throw InputError(pos, fmt::format("shape dimension '{}' overflows at batch {}", d, batch));
  }
  return t->k * batch;
}

}  // namespace

std::optional<DimTemplate> parse_dim_template(std::string_view dim) noexcept {
  const std::string_view d = trim_blanks(dim);
  if (d == "B") return DimTemplate{1, true};
  std::int64_t k = 0;
  const std::size_t star = d.find('*');
  if (star == std::string_view::npos) {
    if (parse_int64(d, k)) return DimTemplate{k, false};
    return std::nullopt;
  }
  const std::string_view lhs = trim_blanks(d.substr(0, star));
  const std::string_view rhs = trim_blanks(d.substr(star + 1));
  if ((lhs == "B" && parse_int64(rhs, k)) || (rhs == "B" && parse_int64(lhs, k))) {
    if (k > 0) return DimTemplate{k, true};
  }
  return std::nullopt;
}

bool same_shape_template(std::string_view a, std::string_view b) noexcept {
  a = trim_blanks(a);
  b = trim_blanks(b);
  if (a.empty() || b.empty()) return a.empty() && b.empty();
  std::size_t ia = 0;
  std::size_t ib = 0;
  while (true) {
    const std::size_t ea = std::min(a.find(',', ia), a.size());
    const std::size_t eb = std::min(b.find(',', ib), b.size());
    const std::string_view da = trim_blanks(a.substr(ia, ea - ia));
    const std::string_view db = trim_blanks(b.substr(ib, eb - ib));
    const auto ta = parse_dim_template(da);
    const auto tb = parse_dim_template(db);
    if (ta && tb) {
      if (ta->k != tb->k || ta->batch != tb->batch) return false;
    } else if (da != db) {
      return false;
    }
    const bool end_a = ea == a.size();
    const bool end_b = eb == b.size();
    if (end_a || end_b) return end_a && end_b;
    ia = ea + 1;
    ib = eb + 1;
  }
}

std::vector<std::string> split_shape_list(std::string_view list) { return split_trimmed(list, ';'); }

bool mentions_batch(std::string_view shapes) noexcept {
  return shapes.find('B') != std::string_view::npos;
}

std::string substitute_batch(std::string_view shapes, std::int64_t batch, const SourcePos& pos) {
  NPUSIM_CHECK(batch >= 1);
  std::string out;
  out.reserve(shapes.size() + 8);
  std::size_t start = 0;
  // Walk dimension by dimension; separators (',' ';') are copied as they are.
  for (std::size_t i = 0; i <= shapes.size(); ++i) {
    if (i < shapes.size() && shapes[i] != ',' && shapes[i] != ';') continue;
    const std::string_view dim = shapes.substr(start, i - start);
    if (dim.find('B') != std::string_view::npos || dim.find('*') != std::string_view::npos) {
      const std::int64_t v = eval_dim(dim, batch, pos);
      out += v < 0 ? std::string(dim) : std::to_string(v);
    } else {
      out += dim;
    }
    if (i < shapes.size()) out += shapes[i];
    start = i + 1;
  }
  return out;
}

}  // namespace npusim
