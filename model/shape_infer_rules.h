#pragma once
// Internal to the shape rules (model/shape_infer*.cpp): dimensions as k * B^b, the context a rule
// reads (its op, input shapes and dtypes) and the arithmetic every rule shares. The interface is
// model/shape_infer.h.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"
#include "model/graph.h"
#include "model/op_desc.h"
#include "model/op_table.h"
#include "model/text.h"

namespace npusim::shape_rules {

// One dimension as k * B^b. Inputs and results have b <= 1; products in between may have more.
struct Dim {
  std::int64_t k = 1;
  int b = 0;
};
using Shape = std::vector<Dim>;

inline bool same(Dim x, Dim y) { return x.k == y.k && x.b == y.b; }
inline bool is_one(Dim d) { return d.b == 0 && d.k == 1; }
inline Dim lit(std::int64_t k) { return Dim{k, 0}; }

inline std::string dim_text(Dim d) {
  if (d.b == 0) return std::to_string(d.k);
  return d.k == 1 ? std::string("B") : fmt::format("B*{}", d.k);
}
inline std::string shape_text(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    out += dim_text(s[i]);
  }
  return out;
}

inline std::optional<Shape> parse_shape(std::string_view text) {
  Shape s;
  text = trim_blanks(text);
  if (text.empty()) return s;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const auto t = parse_dim_template(text.substr(start, i - start));
    if (!t || t->k <= 0) return std::nullopt;
    s.push_back(Dim{t->k, t->batch ? 1 : 0});
    start = i + 1;
  }
  return s;
}

inline std::string canon(std::string_view d) {
  const auto p = parse_dtype(trim_blanks(d));
  return p ? std::string(dtype_name(*p)) : std::string(trim_blanks(d));
}

inline bool one_of(std::string_view s, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// Everything a rule reads, and how it fails.
struct Ctx {
  const OpText& op;
  std::vector<Shape> in;
  std::vector<std::string> dt;
  const SourcePos& pos;

  [[noreturn]] void fail(const std::string& what) const {
    if (op.name.empty()) throw InputError(pos, fmt::format("{}: {}", op.type, what));  // predict
    throw InputError(pos, fmt::format("graph op '{}' ({}): {}", op.name, op.type, what));
  }
  [[nodiscard]] std::optional<std::string> attr(std::initializer_list<std::string_view> keys) const {
    for (const std::string_view key : keys) {
      for (const auto& [k, v] : op.attrs) {
        if (k == key) return v;
      }
    }
    return std::nullopt;
  }
  // An integer list attribute ("1,2", "[1, 2]", "3"); nullopt when absent.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> ints(
      std::initializer_list<std::string_view> keys) const {
    const auto v = attr(keys);
    if (!v) return std::nullopt;
    std::vector<std::int64_t> out;
    std::string_view s = trim_blanks(*v);
    if (!s.empty() && s.front() == '[') s.remove_prefix(1);
    if (!s.empty() && s.back() == ']') s.remove_suffix(1);
    s = trim_blanks(s);
    if (s.empty()) return out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
      if (i < s.size() && s[i] != ',') continue;
      const std::string_view item = trim_blanks(s.substr(start, i - start));
      std::int64_t x = 0;
      const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
      if (item.empty() || ec != std::errc() || p != item.data() + item.size()) {
        fail(fmt::format("attribute {} = '{}': expected integers separated by ','", *keys.begin(),
                         *v));
      }
      out.push_back(x);
      start = i + 1;
    }
    return out;
  }
  [[nodiscard]] std::optional<std::int64_t> int_attr(
      std::initializer_list<std::string_view> keys) const {
    const auto v = ints(keys);
    if (!v) return std::nullopt;
    if (v->size() != 1) fail(fmt::format("attribute {}: expected one integer", *keys.begin()));
    return v->front();
  }
  [[nodiscard]] bool flag(std::initializer_list<std::string_view> keys) const {
    const auto v = attr(keys);
    return v && (*v == "true" || *v == "1" || *v == "True");
  }
  // An axis attribute normalised to [0, rank); `rank` may be rank + 1 for a new axis.
  [[nodiscard]] std::size_t axis(std::int64_t a, std::size_t rank, std::string_view what) const {
    const auto r = static_cast<std::int64_t>(rank);
    const std::int64_t n = a < 0 ? a + r : a;
    if (n < 0 || n >= r) fail(fmt::format("{} {} is out of range for rank {}", what, a, rank));
    return static_cast<std::size_t>(n);
  }
  [[nodiscard]] const Shape& input(std::size_t j) const {
    if (j >= in.size()) fail(fmt::format("expected at least {} inputs, got {}", j + 1, in.size()));
    return in[j];
  }
};

inline Dim mul(const Ctx& c, Dim x, Dim y) {
  if (y.k != 0 && x.k > std::numeric_limits<std::int64_t>::max() / y.k) c.fail("shape overflows");
  return Dim{x.k * y.k, x.b + y.b};
}
inline Dim add(const Ctx& c, Dim x, Dim y) {
  if (x.b != y.b) {
    c.fail(fmt::format("{} + {} is not a dimension of the form k or k*B", dim_text(x), dim_text(y)));
  }
  return Dim{x.k + y.k, x.b};
}
inline Dim product(const Ctx& c, const Shape& s, std::size_t from = 0,
            std::size_t to = std::numeric_limits<std::size_t>::max()) {
  Dim p = lit(1);
  for (std::size_t i = from; i < std::min(to, s.size()); ++i) p = mul(c, p, s[i]);
  return p;
}
// A result dimension must be k or k*B.
inline Shape checked(const Ctx& c, Shape s) {
  for (const Dim d : s) {
    if (d.b > 1) c.fail("an output dimension would be a power of B: not of the form k or k*B");
  }
  return s;
}

inline Shape broadcast(const Ctx& c, const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, lit(1));
  for (std::size_t d = 0; d < rank; ++d) {
    for (const Shape& s : shapes) {
      if (s.size() + d < rank) continue;
      const Dim x = s[s.size() + d - rank];
      if (is_one(x)) continue;
      if (is_one(out[d])) {
        out[d] = x;
      } else if (!same(out[d], x)) {
        std::string list;
        for (const Shape& t : shapes) {
          // appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "'" + string&&
          if (!list.empty()) list += ", ";
          list += '\'';
          list += shape_text(t);
          list += '\'';
        }
        c.fail(fmt::format("input shapes {} do not broadcast (axis {} from the right: {} vs {})",
                           list, rank - d, dim_text(out[d]), dim_text(x)));
      }
    }
  }
  return out;
}

struct Out {
  std::vector<Shape> shapes;
  std::vector<std::string> dtypes;
  bool exact = true;
  std::string note;
};
using Result = std::optional<Out>;
inline Out one(Shape s, std::string dtype) { return Out{{std::move(s)}, {std::move(dtype)}, true, {}}; }


// ---- the rules, by role of the op table -------------------------------------------------------

// shape_infer.cpp: compute and elementwise
Result elementwise(const Ctx& c, const OpKindInfo& kind);
Result reduce(const Ctx& c);
Result rowwise(const Ctx& c);
Result matmul(const Ctx& c, bool batched);
Result conv(const Ctx& c);
Result pool(const Ctx& c);
Result attention(const Ctx& c);
// shape_infer_movement.cpp: data movement
Result tile(const Ctx& c);
Result concat(const Ctx& c);
Result transpose(const Ctx& c);
Result cast(const Ctx& c);
Result slice(const Ctx& c);
Result copy(const Ctx& c);
Result split(const Ctx& c);
Result pad(const Ctx& c);
// shape_infer_index.cpp: index, sort and AI CPU ops
Result gather(const Ctx& c);
Result gather_elements(const Ctx& c);
Result scatter(const Ctx& c);
Result topk(const Ctx& c);
Result sort(const Ctx& c);
Result dynamic_shape(const Ctx& c);
Result aicpu_static(const Ctx& c);
/// True for a one-element INT32/INT64 tensor (an axis or count given as an input).
bool one_element_int(const Shape& s, const std::string& dtype);

}  // namespace npusim::shape_rules
