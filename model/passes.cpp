#include "model/passes.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "model/op_table.h"
#include "model/text.h"

namespace npusim {

namespace {

const SourcePos kCmd{"<command line>", 0, 0};

// ---- text helpers ---------------------------------------------------------------------------

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] != sep) continue;
    out.emplace_back(trim_blanks(s.substr(start, i - start)));
    start = i + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

// A shape template ("B,8,32,300") as its dimensions; a scalar ("") has none.
using Dims = std::vector<std::string>;
Dims dims_of(const std::string& shape) { return shape.empty() ? Dims{} : split(shape, ','); }
std::string shape_of(const Dims& d) { return join(d, ","); }

// The shapes of a list ("a;b;c"); an empty list text has no shapes.
std::vector<std::string> shapes_of(const std::string& list) {
  return list.empty() ? std::vector<std::string>{} : split(list, ';');
}

// Per-tensor dtypes of a list; a single dtype applies to every tensor (as make_op reads it).
std::vector<std::string> dtypes_of(const std::string& list, std::size_t tensors) {
  std::vector<std::string> d = list.empty() ? std::vector<std::string>{} : split(list, ';');
  if (d.size() == 1 && tensors > 1) d.assign(tensors, d.front());
  return d;
}

std::optional<std::int64_t> as_int(const std::string& s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// A dimension template as k × B^e (e is 0 or 1): "7" -> {7, 0}, "B" -> {1, 1}, "B*4" -> {4, 1}.
struct DimTerm {
  std::int64_t k = 1;
  int b = 0;
};
std::optional<DimTerm> dim_term(const std::string& d) {
  const auto t = parse_dim_template(d);  // the graph's own dimension grammar
  if (!t) return std::nullopt;
  return DimTerm{t->k, t->batch ? 1 : 0};
}
std::string dim_text(const DimTerm& t) {
  if (t.b == 0) return std::to_string(t.k);
  return t.k == 1 ? std::string("B") : fmt::format("B*{}", t.k);
}
// The product of dimension templates, when it is still one (at most one B).
std::optional<std::string> dim_product(const std::vector<std::string>& dims) {
  DimTerm p;
  for (const std::string& d : dims) {
    const auto t = dim_term(d);
    if (!t || (p.b + t->b) > 1 || t->k <= 0) return std::nullopt;
    if (p.k > std::numeric_limits<std::int32_t>::max() / std::max<std::int64_t>(t->k, 1)) {
      return std::nullopt;
    }
    p.k *= t->k;
    p.b += t->b;
  }
  return dim_text(p);
}
// out / in for one dimension of a Tile: "1" when equal; nullopt when not a whole multiple.
std::optional<std::string> dim_ratio(const std::string& in, const std::string& out) {
  if (in == out) return std::string("1");
  const auto ti = dim_term(in);
  const auto to = dim_term(out);
  if (!ti || !to || to->b < ti->b || to->k % ti->k != 0) return std::nullopt;
  return dim_text(DimTerm{to->k / ti->k, to->b - ti->b});
}
bool is_one(const std::string& d) { return d == "1"; }
// True when a shape template has exactly one element at every batch size.
bool one_element(const std::string& shape) {
  const Dims d = dims_of(shape);
  return std::all_of(d.begin(), d.end(), is_one);
}

bool type_in(const std::string& type, std::initializer_list<std::string_view> types) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::optional<std::string_view> text_attr(const OpText& t, std::string_view key) {
  for (const auto& [k, v] : t.attrs) {
    if (k == key) return v;
  }
  return std::nullopt;
}
void set_attr(OpText& t, const std::string& key, const std::string& value) {
  for (auto& [k, v] : t.attrs) {
    if (k == key) {
      v = value;
      return;
    }
  }
  t.attrs.emplace_back(key, value);
}
void erase_attrs(OpText& t, std::initializer_list<std::string_view> keys) {
  t.attrs.erase(std::remove_if(t.attrs.begin(), t.attrs.end(),
                               [&](const auto& kv) {
                                 return std::find(keys.begin(), keys.end(), kv.first) != keys.end();
                               }),
                t.attrs.end());
}

// ---- a graph being rewritten ------------------------------------------------------------------

// The ops of a graph with every `after` explicit, plus the bookkeeping a rewrite needs.
class Work {
 public:
  explicit Work(const Graph& g) : name_(g.name()), ops_(g.ops()), removed_(g.size(), false) {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (!ops_[i].after) {
        ops_[i].after =
            i == 0 ? std::vector<std::string>{} : std::vector<std::string>{ops_[i - 1].text.name};
      }
    }
  }

  std::vector<GraphOp>& ops() { return ops_; }
  GraphOp& op(std::size_t i) { return ops_.at(i); }
  const std::string& name_of(std::size_t i) const { return ops_.at(i).text.name; }
  bool removed(std::size_t i) const { return removed_.at(i); }

  std::optional<std::size_t> find(std::string_view name) const {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (!removed_[i] && ops_[i].text.name == name) return i;
    }
    return std::nullopt;
  }
  // Ops that list op i in `after` (its consumers), in file order.
  std::vector<std::size_t> consumers(std::size_t i) const {
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < ops_.size(); ++j) {
      if (removed_[j]) continue;
      const auto& a = *ops_[j].after;
      if (std::find(a.begin(), a.end(), ops_[i].text.name) != a.end()) out.push_back(j);
    }
    return out;
  }
  std::vector<std::size_t> producers(std::size_t i) const {
    std::vector<std::size_t> out;
    for (const std::string& n : *ops_[i].after) {
      if (auto p = find(n)) out.push_back(*p);
    }
    return out;
  }
  // A name not used by any op: `base`, else base_2, base_3...
  std::string fresh_name(const std::string& base) const {
    std::string n = base;
    for (int k = 2; find(n) || taken_.count(n); ++k) n = fmt::format("{}_{}", base, k);
    return n;
  }

  // In op j's `after`, `old` is replaced by `repl` (order kept, duplicates dropped).
  void replace_dep(std::size_t j, const std::string& old, const std::vector<std::string>& repl) {
    std::vector<std::string> out;
    for (const std::string& a : *ops_[j].after) {
      const std::vector<std::string> with = a == old ? repl : std::vector<std::string>{a};
      for (const std::string& w : with) {
        if (w != ops_[j].text.name && std::find(out.begin(), out.end(), w) == out.end()) {
          out.push_back(w);
        }
      }
    }
    ops_[j].after = std::move(out);
  }
  // Removes op i; its consumers depend on what it depended on instead (or on `instead`).
  void remove(std::size_t i, std::optional<std::vector<std::string>> instead = std::nullopt) {
    const std::vector<std::string> deps = instead ? *instead : *ops_[i].after;
    for (const std::size_t c : consumers(i)) replace_dep(c, ops_[i].text.name, deps);
    removed_[i] = true;
  }
  // Inserts `op` before op `before` (or at the end).
  void insert(std::size_t before, GraphOp op) {
    taken_.insert(op.text.name);
    pending_.emplace_back(before, std::move(op));
  }

  // The rewritten graph: removed ops gone, inserted ones in place. Graph::build validates it.
  Graph build() {
    std::vector<GraphOp> out;
    for (std::size_t i = 0; i <= ops_.size(); ++i) {
      for (auto& [at, op] : pending_) {
        if (at == i) out.push_back(std::move(op));
      }
      if (i < ops_.size() && !removed_[i]) out.push_back(std::move(ops_[i]));
    }
    return Graph::build(name_, std::move(out));
  }

 private:
  std::string name_;
  std::vector<GraphOp> ops_;
  std::vector<bool> removed_;
  std::vector<std::pair<std::size_t, GraphOp>> pending_;
  std::set<std::string> taken_;
};

// A new op derived from `from` (it keeps its position for errors and its stream).
GraphOp derived_op(const GraphOp& from, std::string name, std::string type) {
  GraphOp op;
  op.pos = from.pos;
  op.after_pos = from.pos;
  op.shapes_pos = from.shapes_pos;
  op.stream = from.stream;
  op.text.name = std::move(name);
  op.text.type = std::move(type);
  return op;
}

Placement placement_of(const Graph& g, std::size_t i) {
  const OpDesc d = g.instantiate(i, 1);
  return d.placement.value_or(d.kind->placement);
}

PassResult finish(Work& w, const Graph& input, std::vector<GraphChange> changes) {
  if (changes.empty()) return {input, {}};
  return {w.build(), std::move(changes)};
}

const std::initializer_list<std::string_view> kTileTypes = {"Tile", "TileD"};
const std::initializer_list<std::string_view> kBmmTypes = {"BatchMatMul", "BatchMatMulV2",
                                                           "BatchMatMulV3"};
const std::initializer_list<std::string_view> kConcatTypes = {"Concat", "ConcatD", "ConcatV2",
                                                              "ConcatV2D"};

// The concat axis of a Concat (attribute concat_dim or axis, default 0), normalised to >= 0.
std::optional<std::size_t> concat_axis(const OpText& t, std::size_t rank) {
  std::int64_t axis = 0;
  for (const char* key : {"concat_dim", "axis"}) {
    if (const auto v = text_attr(t, key)) {
      const auto a = as_int(std::string(*v));
      if (!a) return std::nullopt;
      axis = *a;
    }
  }
  if (axis < 0) axis += static_cast<std::int64_t>(rank);
  if (axis < 0 || axis >= static_cast<std::int64_t>(rank)) return std::nullopt;
  return static_cast<std::size_t>(axis);
}

// ---- 1. drop_redundant_tile -------------------------------------------------------------------

PassResult run_drop_redundant_tile(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t t = 0; t < g.size(); ++t) {
    const OpText& tt = g.ops()[t].text;
    if (!type_in(tt.type, kTileTypes)) continue;
    const std::vector<std::string> ins = shapes_of(tt.input_shapes);
    const std::vector<std::string> outs = shapes_of(tt.output_shapes);
    if (ins.empty() || outs.size() != 1) continue;
    const Dims in = dims_of(ins[0]);
    const Dims out = dims_of(outs[0]);
    if (in.size() != out.size() || in.size() < 3) continue;
    const std::size_t r = in.size();
    // Only batch axes tiled, and only from 1: what a broadcasting BatchMatMul does by itself.
    bool broadcastable = in[r - 1] == out[r - 1] && in[r - 2] == out[r - 2];
    for (std::size_t d = 0; d + 2 < r && broadcastable; ++d) {
      broadcastable = in[d] == out[d] || is_one(in[d]);
    }
    if (!broadcastable || in == out) continue;
    const std::vector<std::size_t> users = w.consumers(t);
    if (users.empty()) continue;
    // Every consumer is a BatchMatMul reading the tiled tensor whose other operand spans the
    // tiled axes, so its output keeps its batch when it broadcasts instead.
    std::vector<std::pair<std::size_t, std::size_t>> reads;  // (consumer, input index)
    bool ok = true;
    for (const std::size_t c : users) {
      const OpText& ct = w.op(c).text;
      const std::vector<std::string> cs = shapes_of(ct.input_shapes);
      if (!type_in(ct.type, kBmmTypes) || cs.size() < 2) {
        ok = false;
        break;
      }
      std::optional<std::size_t> j;
      for (std::size_t k = 0; k < 2; ++k) {
        if (cs[k] == outs[0]) j = k;
      }
      if (!j) {
        ok = false;
        break;
      }
      const Dims other = dims_of(cs[1 - *j]);
      for (std::size_t d = 0; d + 2 < r && ok; ++d) {
        if (in[d] == out[d]) continue;
        // right-aligned batch axis of the other operand
        const std::ptrdiff_t od = static_cast<std::ptrdiff_t>(other.size()) -
                                  static_cast<std::ptrdiff_t>(r) + static_cast<std::ptrdiff_t>(d);
        ok = od >= 0 && other[static_cast<std::size_t>(od)] == out[d];
      }
      if (!ok) break;
      reads.emplace_back(c, *j);
    }
    if (!ok) continue;
    std::vector<std::string> names{tt.name};
    std::vector<std::string> user_names;
    for (const auto& [c, j] : reads) {
      std::vector<std::string> cs = shapes_of(w.op(c).text.input_shapes);
      cs[j] = ins[0];
      w.op(c).text.input_shapes = join(cs, ";");
      names.push_back(w.name_of(c));
      user_names.push_back(fmt::format("'{}'", w.name_of(c)));
    }
    w.remove(t);
    changes.push_back(
        {"drop_redundant_tile", names,
         fmt::format("removed {} '{}' ({} -> {}); {} read{} {} and broadcast{} it", tt.type,
                     tt.name, ins[0], outs[0], join(user_names, ", "),
                     user_names.size() == 1 ? "s" : "", ins[0], user_names.size() == 1 ? "s" : ""),
         "BatchMatMul broadcasts batch axes of size 1 by itself: the Tile only wrote copies of "
         "the tensor to HBM for the BatchMatMul to read back"});
  }
  return finish(w, g, std::move(changes));
}

// ---- 2. tile_concat ---------------------------------------------------------------------------

PassResult run_tile_concat(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t c = 0; c < g.size(); ++c) {
    if (w.removed(c)) continue;
    const OpText& ct = g.ops()[c].text;
    if (!type_in(ct.type, kConcatTypes)) continue;
    const std::vector<std::string> ins = shapes_of(ct.input_shapes);
    if (ins.size() < 2) continue;
    const Dims d0 = dims_of(ins[0]);
    const auto axis = concat_axis(ct, d0.size());
    if (!axis) continue;
    const std::vector<std::string> dts = dtypes_of(ct.input_dtypes, ins.size());
    if (dts.size() != ins.size()) continue;
    const std::string fmt0 =
        shapes_of(ct.input_formats).empty() ? std::string() : split(ct.input_formats, ';').front();

    // (b) one tensor concatenated with itself: a Tile along the axis.
    const bool same_source = text_attr(ct, "same_source").value_or("") == "true";
    if (same_source &&
        std::all_of(ins.begin(), ins.end(), [&](const std::string& s) { return s == ins[0]; })) {
      Dims out = d0;
      const auto t = dim_term(out[*axis]);
      if (!t) continue;
      out[*axis] = dim_text(DimTerm{t->k * static_cast<std::int64_t>(ins.size()), t->b});
      Dims mult(d0.size(), "1");
      mult[*axis] = std::to_string(ins.size());
      OpText& nt = w.op(c).text;
      const std::string old_type = nt.type;
      nt.type = "Tile";
      nt.input_shapes = fmt::format("{};{}", ins[0], d0.size());
      nt.input_dtypes = fmt::format("{};INT64", dts[0]);
      nt.input_formats = fmt0.empty() ? std::string() : fmt::format("{};ND", fmt0);
      if (nt.output_shapes.empty()) nt.output_shapes = shape_of(out);
      if (nt.output_dtypes.empty()) nt.output_dtypes = dts[0];
      erase_attrs(nt, {"concat_dim", "axis", "N", "same_source"});
      set_attr(nt, "multiples", join(mult, ","));
      changes.push_back(
          {"tile_concat",
           {ct.name},
           fmt::format("{} '{}' of {} copies of one {} tensor -> Tile (multiples {})", old_type,
                       ct.name, ins.size(), ins[0], join(mult, ",")),
           fmt::format("a Concat reads each of its {} inputs from HBM; a Tile reads the one "
                       "tensor once and writes the same output",
                       ins.size())});
      continue;
    }

    // (a) a Concat of Tiles with equal multiples: a Tile of the Concat of their inputs.
    const std::vector<std::size_t> prods = w.producers(c);
    if (prods.size() != ins.size()) continue;
    std::vector<std::string> tile_ins;
    std::optional<Dims> mult;
    bool ok = true;
    for (std::size_t k = 0; k < prods.size() && ok; ++k) {
      const OpText& tt = w.op(prods[k]).text;
      const std::vector<std::string> ti = shapes_of(tt.input_shapes);
      const std::vector<std::string> to = shapes_of(tt.output_shapes);
      ok = type_in(tt.type, kTileTypes) && !ti.empty() && to.size() == 1 && to[0] == ins[k] &&
           w.consumers(prods[k]).size() == 1 &&
           dtypes_of(tt.input_dtypes, ti.size()).front() == dts[k];
      if (!ok) break;
      const Dims a = dims_of(ti[0]);
      const Dims b = dims_of(to[0]);
      ok = a.size() == b.size() && a.size() == d0.size();
      Dims m;
      for (std::size_t d = 0; d < a.size() && ok; ++d) {
        const auto q = dim_ratio(a[d], b[d]);
        ok = q.has_value();
        if (ok) m.push_back(*q);
      }
      // Tiling along the concat axis interleaves the copies differently: not a swap.
      ok = ok && is_one(m[*axis]) && (!mult || *mult == m);
      if (ok) {
        mult = m;
        tile_ins.push_back(ti[0]);
      }
    }
    if (!ok || !mult || std::all_of(mult->begin(), mult->end(), is_one)) continue;
    // The new Concat's output: the tile inputs summed along the axis (integer dims only).
    Dims cat = dims_of(tile_ins[0]);
    std::int64_t along = 0;
    for (const std::string& s : tile_ins) {
      const auto v = as_int(dims_of(s)[*axis]);
      if (!v) {
        ok = false;
        break;
      }
      along += *v;
    }
    if (!ok) continue;
    cat[*axis] = std::to_string(along);
    std::vector<std::string> deps;
    std::vector<std::string> names{ct.name};
    for (const std::size_t p : prods) {
      names.push_back(w.name_of(p));
      for (const std::string& a : *w.op(p).after) {
        if (std::find(deps.begin(), deps.end(), a) == deps.end()) deps.push_back(a);
      }
    }
    const std::string tile_name = w.fresh_name(ct.name + "_tile");
    GraphOp tile = derived_op(g.ops()[c], tile_name, "Tile");
    tile.text.input_shapes = fmt::format("{};{}", shape_of(cat), cat.size());
    tile.text.input_dtypes = fmt::format("{};INT64", dts[0]);
    tile.text.output_shapes =
        ct.output_shapes.empty() ? std::string() : shapes_of(ct.output_shapes).front();
    tile.text.output_dtypes = dts[0];
    tile.after = std::vector<std::string>{ct.name};
    for (const std::size_t u : w.consumers(c)) w.replace_dep(u, ct.name, {tile_name});
    OpText& nc = w.op(c).text;
    nc.input_shapes = join(tile_ins, ";");
    nc.output_shapes = shape_of(cat);
    if (nc.output_dtypes.empty()) nc.output_dtypes = dts[0];
    for (const std::size_t p : prods) w.remove(p, std::vector<std::string>{});
    w.op(c).after = deps;
    w.insert(c + 1, std::move(tile));
    changes.push_back(
        {"tile_concat", names,
         fmt::format("Concat '{}' of {} Tiles (multiples {}) -> Concat of their inputs ({}) then "
                     "Tile '{}'",
                     ct.name, prods.size(), join(*mult, ","), shape_of(cat), tile_name),
         "the Concat now moves the untiled tensors, and one Tile writes the output once instead "
         "of each Tile writing its copies and the Concat reading them back"});
  }
  return finish(w, g, std::move(changes));
}

// ---- 3. fold_bmm_batch ------------------------------------------------------------------------

bool transposed(const OpText& t) {
  for (const char* k : {"adj_x1", "adj_x2", "transpose_a", "transpose_b", "transpose_x1",
                        "transpose_x2", "adj_x", "adj_y"}) {
    const auto v = text_attr(t, k);
    if (v && (*v == "true" || *v == "1" || *v == "True")) return true;
  }
  return false;
}

PassResult run_fold_bmm_batch(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpText& bt = g.ops()[i].text;
    if (!type_in(bt.type, kBmmTypes) || transposed(bt)) continue;
    const std::vector<std::string> ins = shapes_of(bt.input_shapes);
    if (ins.size() != 2) continue;
    const Dims a = dims_of(ins[0]);
    const Dims b = dims_of(ins[1]);
    if (a.size() != b.size() || a.size() < 3) continue;
    const std::size_t r = a.size();
    const std::size_t nb = r - 2;   // batch axes
    std::vector<std::size_t> fold;  // b is 1, a is not: fold into M
    std::vector<std::size_t> keep;  // the batched axes that stay
    bool ok = true;
    for (std::size_t d = 0; d < nb; ++d) {
      if (is_one(b[d]) && !is_one(a[d])) {
        fold.push_back(d);
      } else if (a[d] == b[d]) {
        keep.push_back(d);
      } else {
        ok = false;
      }
    }
    if (!ok || fold.empty()) continue;
    std::vector<std::string> fold_dims;
    for (const std::size_t d : fold) fold_dims.push_back(a[d]);
    fold_dims.push_back(a[r - 2]);
    const auto m_new = dim_product(fold_dims);
    if (!m_new) continue;
    // Free when no kept axis larger than 1 sits after a folded one in a's memory order: then
    // (kept..., folded..., M) is a's own order and the fold is a reshape.
    bool free_layout = true;
    for (const std::size_t k : keep) {
      if (!is_one(a[k]) && k > fold.front()) free_layout = false;
    }
    Dims kept_a;
    Dims kept_b;
    for (const std::size_t k : keep) {
      if (is_one(a[k]) && is_one(b[k])) continue;
      kept_a.push_back(a[k]);
      kept_b.push_back(b[k]);
    }
    Dims new_a = kept_a;
    new_a.push_back(*m_new);
    new_a.push_back(a[r - 1]);
    Dims new_b = kept_b;
    new_b.push_back(b[r - 2]);
    new_b.push_back(b[r - 1]);
    Dims new_out = kept_a;
    new_out.push_back(*m_new);
    new_out.push_back(b[r - 1]);
    // The original output, for the Transpose back.
    Dims out_orig(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(nb));
    out_orig.push_back(a[r - 2]);
    out_orig.push_back(b[r - 1]);
    const std::vector<std::string> dts = dtypes_of(bt.input_dtypes, 2);
    const std::string out_dtype =
        bt.output_dtypes.empty() ? dts.front() : split(bt.output_dtypes, ';').front();

    std::vector<std::string> names{bt.name};
    std::string what;
    OpText& nt = w.op(i).text;
    const Dims old_a = a;
    nt.input_shapes = shape_of(new_a) + ";" + shape_of(new_b);
    nt.output_shapes = shape_of(new_out);
    if (nt.output_dtypes.empty()) nt.output_dtypes = out_dtype;
    if (free_layout) {
      what = fmt::format(
          "BatchMatMul '{}' {} x {} -> {} x {} (batch axes folded into M; a "
          "reshape, the layout is contiguous)",
          bt.name, ins[0], ins[1], shape_of(new_a), shape_of(new_b));
    } else {
      // (kept..., folded..., M, K): a permutation of a's axes, then the fold is a reshape.
      std::vector<std::size_t> perm;
      for (const std::size_t k : keep) perm.push_back(k);
      for (const std::size_t f : fold) perm.push_back(f);
      perm.push_back(r - 2);
      perm.push_back(r - 1);
      Dims permuted_a;
      std::vector<std::string> perm_text;
      for (const std::size_t p : perm) {
        permuted_a.push_back(old_a[p]);
        perm_text.push_back(std::to_string(p));
      }
      const std::string in_name = w.fresh_name(bt.name + "_fold_in");
      GraphOp tin = derived_op(g.ops()[i], in_name, "Transpose");
      tin.text.input_shapes = ins[0];
      tin.text.input_dtypes = dts[0];
      tin.text.output_shapes = shape_of(permuted_a);
      tin.text.output_dtypes = dts[0];
      tin.text.attrs.emplace_back("perm", join(perm_text, ","));
      tin.after = *w.op(i).after;
      // The result comes out as (kept..., folded..., M, N): the inverse permutation restores
      // the original order.
      Dims permuted_out;
      for (std::size_t k = 0; k < perm.size(); ++k) {
        permuted_out.push_back(out_orig[perm[k]]);
      }
      std::vector<std::string> inverse(perm.size());
      for (std::size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = std::to_string(k);
      const std::string out_name = w.fresh_name(bt.name + "_fold_out");
      GraphOp tout = derived_op(g.ops()[i], out_name, "Transpose");
      tout.text.input_shapes = shape_of(permuted_out);
      tout.text.input_dtypes = out_dtype;
      tout.text.output_shapes = shape_of(out_orig);
      tout.text.output_dtypes = out_dtype;
      tout.text.attrs.emplace_back("perm", join(inverse, ","));
      tout.after = std::vector<std::string>{bt.name};
      for (const std::size_t u : w.consumers(i)) w.replace_dep(u, bt.name, {out_name});
      std::vector<std::string> deps = *w.op(i).after;
      deps.push_back(in_name);
      w.op(i).after = deps;
      w.insert(i, std::move(tin));
      w.insert(i + 1, std::move(tout));
      what = fmt::format(
          "BatchMatMul '{}' {} x {} -> {} x {}, with Transpose '{}' (perm {}) "
          "before and '{}' (perm {}) after: a batch axis of size > 1 lies between "
          "the folded axis and M, so the fold is not a plain reshape",
          bt.name, ins[0], ins[1], shape_of(new_a), shape_of(new_b), in_name, join(perm_text, ","),
          out_name, join(inverse, ","));
    }
    changes.push_back(
        {"fold_bmm_batch", names, what,
         fmt::format("the second operand is shared along the folded axes, so the products become "
                     "fewer and taller (M {} instead of {}): the cube's 16-row fractals are "
                     "filled instead of padded",
                     *m_new, a[r - 2])});
  }
  return finish(w, g, std::move(changes));
}

// ---- 4. int64_narrow --------------------------------------------------------------------------

const std::initializer_list<std::string_view> kNarrowCompare = {
    "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"};
const std::initializer_list<std::string_view> kNarrowArith = {"FloorMod", "FloorDiv", "Mod"};
const std::initializer_list<std::string_view> kNarrowTopK = {"TopK", "TopKV2", "TopKD"};

// fp32 holds every integer of magnitude up to 2^24 exactly.
constexpr std::int64_t kFp32ExactInt = std::int64_t{1} << 24;

// Does `value_range = "lo,hi"` say the values fit? Throws InputError at the op for a malformed
// range.
bool range_fits(const GraphOp& op, std::string_view range, bool topk) {
  const std::vector<std::string> parts = split(range, ',');
  const auto lo = parts.size() == 2 ? as_int(parts[0]) : std::nullopt;
  const auto hi = parts.size() == 2 ? as_int(parts[1]) : std::nullopt;
  if (!lo || !hi || *lo > *hi) {
    throw InputError(op.pos, fmt::format("graph op '{}': attribute value_range = '{}': expected "
                                         "\"lo,hi\" with integers lo <= hi",
                                         op.text.name, range));
  }
  if (topk) return *lo >= -kFp32ExactInt && *hi <= kFp32ExactInt;
  return *lo >= std::numeric_limits<std::int32_t>::min() &&
         *hi <= std::numeric_limits<std::int32_t>::max();
}

PassResult run_int64_narrow(const Graph& g, const PassOptions& options) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const GraphOp& gop = g.ops()[i];
    const OpText& ot = gop.text;
    const bool topk = type_in(ot.type, kNarrowTopK);
    const bool arith = type_in(ot.type, kNarrowArith);
    if (!topk && !arith && !type_in(ot.type, kNarrowCompare)) continue;
    const std::vector<std::string> ins = shapes_of(ot.input_shapes);
    std::vector<std::string> dts = dtypes_of(ot.input_dtypes, ins.size());
    if (dts.size() != ins.size()) continue;
    // TopK: only its values (input 0) are narrowed; k stays as it is.
    const std::size_t narrowable = topk ? 1 : ins.size();
    bool any = false;
    for (std::size_t j = 0; j < narrowable; ++j) {
      const auto d = parse_dtype(dts[j]);
      any = any || (d && is_int64(*d));
    }
    if (!any) continue;
    const std::string narrow = topk ? "FLOAT32" : "INT32";
    std::string because;
    if (const auto range = text_attr(ot, "value_range")) {
      if (!range_fits(gop, *range, topk)) continue;
      because = fmt::format("value_range {} fits {}", *range, narrow);
    } else if (std::find(options.assume_fits.begin(), options.assume_fits.end(), ot.name) !=
               options.assume_fits.end()) {
      because = fmt::format("values asserted to fit {} (--assume-fits)", narrow);
    } else {
      continue;
    }
    std::vector<std::string> notes;
    std::vector<std::string> new_deps = *w.op(i).after;
    const std::vector<std::size_t> prods = w.producers(i);
    for (std::size_t j = 0; j < narrowable; ++j) {
      const auto d = parse_dtype(dts[j]);
      if (!d || !is_int64(*d)) continue;
      dts[j] = narrow;
      if (one_element(ins[j])) {
        notes.push_back(
            fmt::format("input {} ({}) is a one-element constant, stored as {} (no "
                        "op)",
                        j, ins[j].empty() ? "scalar" : ins[j], narrow));
        continue;
      }
      // A producer that already emits this shape in the narrow type feeds it directly.
      std::optional<std::size_t> direct;
      for (const std::size_t p : prods) {
        const OpText& pt = w.op(p).text;
        const std::vector<std::string> po = shapes_of(pt.output_shapes);
        const std::vector<std::string> pd = dtypes_of(pt.output_dtypes, po.size());
        if (po.size() == 1 && pd.size() == 1 && po[0] == ins[j] && pd[0] == narrow) direct = p;
      }
      if (direct) {
        notes.push_back(
            fmt::format("input {} ({}) is read from '{}', which the graph says emits "
                        "{} already: no Cast",
                        j, ins[j], w.name_of(*direct), narrow));
        continue;
      }
      const std::string cast_name = w.fresh_name(fmt::format("{}_cast{}", ot.name, j));
      GraphOp cast = derived_op(gop, cast_name, "Cast");
      cast.text.input_shapes = ins[j];
      cast.text.input_dtypes = "INT64";
      cast.text.output_shapes = ins[j];
      cast.text.output_dtypes = narrow;
      cast.after = *w.op(i).after;
      new_deps.push_back(cast_name);
      w.insert(i, std::move(cast));
      notes.push_back(
          fmt::format("Cast '{}' INT64 -> {} of input {} ({})", cast_name, narrow, j, ins[j]));
    }
    OpText& nt = w.op(i).text;
    nt.input_dtypes = join(dts, ";");
    w.op(i).after = new_deps;
    // Results: compares give BOOL either way; FloorMod and TopK values come out narrow, and a
    // Cast back to INT64 keeps what later ops read unchanged.
    if (arith || topk) {
      std::vector<std::string> outs = shapes_of(nt.output_shapes);
      std::vector<std::string> ods =
          dtypes_of(nt.output_dtypes, std::max<std::size_t>(1, outs.size()));
      std::string out_shape;
      if (!outs.empty()) {
        out_shape = outs[0];
      } else if (arith) {
        // elementwise: the larger input (broadcast) is the output
        out_shape = ins[0];
        for (const std::string& s : ins) {
          if (!one_element(s) && dims_of(s).size() >= dims_of(out_shape).size()) out_shape = s;
        }
      } else if (const auto k = text_attr(ot, "k"); k && !dims_of(ins[0]).empty()) {
        Dims d = dims_of(ins[0]);
        d.back() = std::string(*k);
        out_shape = shape_of(d);
      }
      const bool was_int64 =
          ods.empty() || ods[0].empty() || (parse_dtype(ods[0]) && is_int64(*parse_dtype(ods[0])));
      if (was_int64 && !out_shape.empty()) {
        if (!ods.empty() && !ods[0].empty()) {
          ods[0] = narrow;
          nt.output_dtypes = join(ods, ";");
        }
        const std::string back = w.fresh_name(ot.name + "_cast_out");
        GraphOp cast = derived_op(gop, back, "Cast");
        cast.text.input_shapes = out_shape;
        cast.text.input_dtypes = narrow;
        cast.text.output_shapes = out_shape;
        cast.text.output_dtypes = "INT64";
        cast.after = std::vector<std::string>{ot.name};
        for (const std::size_t u : w.consumers(i)) w.replace_dep(u, ot.name, {back});
        w.insert(i + 1, std::move(cast));
        notes.push_back(
            fmt::format("Cast '{}' {} -> INT64 of the result for the ops after it", back, narrow));
      }
    }
    changes.push_back(
        {"int64_narrow",
         {ot.name},
         fmt::format("{} '{}' on {} instead of INT64 ({}); {}", ot.type, ot.name, narrow, because,
                     join(notes, "; ")),
         "int64 compares, modulo and sorts have no vector path and run on the scalar unit; the "
         "32-bit kernel is vectorised"});
  }
  return finish(w, g, std::move(changes));
}

// ---- 5. topk_valid_length ---------------------------------------------------------------------

PassResult run_topk_valid_length(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const GraphOp& gop = g.ops()[i];
    if (!type_in(gop.text.type, kNarrowTopK)) continue;
    const auto f = text_attr(gop.text, "valid_fraction");
    if (!f || text_attr(gop.text, "valid_length")) continue;
    double fraction = 0;
    const std::string fs(*f);
    const auto [p, ec] = std::from_chars(fs.data(), fs.data() + fs.size(), fraction);
    if (ec != std::errc() || p != fs.data() + fs.size() || !(fraction > 0 && fraction <= 1)) {
      throw InputError(gop.pos, fmt::format("graph op '{}': attribute valid_fraction = '{}': "
                                            "expected a number in (0, 1]",
                                            gop.text.name, fs));
    }
    const std::vector<std::string> ins = shapes_of(gop.text.input_shapes);
    if (ins.empty()) continue;
    const auto n = as_int(dims_of(ins[0]).empty() ? std::string() : dims_of(ins[0]).back());
    if (!n) continue;
    const auto valid = static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(*n)));
    if (valid >= *n) continue;
    set_attr(w.op(i).text, "valid_length", std::to_string(valid));
    changes.push_back(
        {"topk_valid_length",
         {gop.text.name},
         fmt::format("TopK '{}' sorts the first {} of {} elements per row (valid_fraction {})",
                     gop.text.name, valid, *n, fs),
         "the rest of each row is padding: reading and merging it costs time and changes no "
         "result"});
  }
  return finish(w, g, std::move(changes));
}

// ---- 6. fuse_masked_gather --------------------------------------------------------------------

PassResult run_fuse_masked_gather(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t wi = 0; wi < g.size(); ++wi) {
    const OpText& wt = g.ops()[wi].text;
    if (w.removed(wi) || !type_in(wt.type, {"Where", "Select", "SelectV2"})) continue;
    if (placement_of(g, wi) != Placement::kAicpu) continue;
    const std::vector<std::string> wout = shapes_of(wt.output_shapes);
    if (wout.size() != 1) continue;
    for (const std::size_t gi : w.consumers(wi)) {
      const OpText& gt = w.op(gi).text;
      if (!type_in(gt.type, {"Gather", "GatherV2", "GatherV2D"})) continue;
      const std::vector<std::string> gin = shapes_of(gt.input_shapes);
      const std::vector<std::string> gout = shapes_of(gt.output_shapes);
      if (gin.size() < 2 || gin[1] != wout[0] || gout.size() != 1) continue;
      // The mask Mul: the gathered rows times a per-row mask (last axis 1).
      std::optional<std::size_t> mul;
      for (const std::size_t mi : w.consumers(gi)) {
        const OpText& mt = w.op(mi).text;
        const std::vector<std::string> ms = shapes_of(mt.input_shapes);
        if (mt.type != "Mul" || ms.size() != 2) continue;
        for (std::size_t k = 0; k < 2; ++k) {
          Dims row = dims_of(gout[0]);
          if (row.empty()) continue;
          row.back() = "1";
          if (ms[k] == gout[0] && ms[1 - k] == shape_of(row)) mul = mi;
        }
      }
      if (!mul) continue;
      const std::string gname = gt.name;
      const std::string mname = w.name_of(*mul);
      // Ops that fed only the masking (their consumers all removed) go too.
      std::vector<std::size_t> dead_candidates = w.producers(wi);
      for (const std::size_t p : w.producers(*mul)) dead_candidates.push_back(p);
      // The Gather now reads the Where's index input: of the Where's producers it keeps those
      // that emit that tensor (the Where's output shape and dtype); the condition's goes.
      const std::vector<std::string> wdt = dtypes_of(wt.output_dtypes, 1);
      std::vector<std::string> index_sources;
      for (const std::size_t p : w.producers(wi)) {
        const OpText& pt = w.op(p).text;
        const std::vector<std::string> po = shapes_of(pt.output_shapes);
        const std::vector<std::string> pd = dtypes_of(pt.output_dtypes, po.size());
        if (po.size() == 1 && pd.size() == 1 && po[0] == wout[0] && wdt.size() == 1 &&
            pd[0] == wdt[0]) {
          index_sources.push_back(pt.name);
        }
      }
      w.replace_dep(gi, wt.name, index_sources);
      set_attr(w.op(gi).text, "negative_index", "zero");
      w.remove(*mul, std::vector<std::string>{gname});
      w.remove(wi);
      std::vector<std::string> names{gname, wt.name, mname};
      for (std::size_t k = 0; k < dead_candidates.size(); ++k) {
        const std::size_t d = dead_candidates[k];
        if (w.removed(d) || d == gi || !w.consumers(d).empty()) continue;
        for (const std::size_t p : w.producers(d)) dead_candidates.push_back(p);
        names.push_back(w.name_of(d));
        w.remove(d);
      }
      std::vector<std::string> gone(names.begin() + 1, names.end());
      for (std::string& s : gone) s = "'" + s + "'";
      changes.push_back(
          {"fuse_masked_gather", names,
           fmt::format("{} '{}' yields zero rows for negative indices; removed {}", gt.type, gname,
                       join(gone, ", ")),
           "the AI CPU Where costs a dispatch and a device -> host -> device shape round trip; a "
           "Gather that zeroes the rows of negative indices needs neither the Where nor the mask "
           "Mul"});
      break;
    }
  }
  return finish(w, g, std::move(changes));
}

// ---- 7. aicpu_to_host -------------------------------------------------------------------------

PassResult run_aicpu_to_host(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  std::vector<bool> host(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) host[i] = placement_of(g, i) == Placement::kHost;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (placement_of(g, i) != Placement::kAicpu) continue;
    bool from_host = true;
    for (const std::size_t p : w.producers(i)) from_host = from_host && host[p];
    if (!from_host) continue;
    host[i] = true;
    GraphOp op = w.op(i);
    op.text.placement = "host";
    // A host op runs when its stream's device work has drained: first in the graph, that is
    // before any device op of the batch.
    w.remove(i, std::vector<std::string>{op.text.name});
    w.insert(0, std::move(op));  // pending ops at one index keep their order
    changes.push_back(
        {"aicpu_to_host",
         {g.ops()[i].text.name},
         fmt::format("{} '{}' runs on the host CPU, first in the graph (placement host)",
                     g.ops()[i].text.type, g.ops()[i].text.name),
         "its inputs come from the host: computing it there costs host time but no AI CPU "
         "dispatch and no device time"});
  }
  return finish(w, g, std::move(changes));
}

}  // namespace

const std::vector<PassInfo>& graph_passes() {
  static const std::vector<PassInfo> kPasses = {
      {"drop_redundant_tile", "drop a Tile that a broadcasting BatchMatMul makes redundant",
       run_drop_redundant_tile},
      {"tile_concat", "Concat of Tiles -> Tile of a Concat; same-source Concat -> Tile",
       run_tile_concat},
      {"fold_bmm_batch", "fold a broadcast batch axis of BatchMatMul into M", run_fold_bmm_batch},
      {"int64_narrow", "int64 TopK / compares / FloorMod on int32 (fp32) when values fit",
       run_int64_narrow},
      {"topk_valid_length", "TopK sorts only the valid prefix of padded rows",
       run_topk_valid_length},
      {"fuse_masked_gather", "Where-masked Gather + mask Mul -> one Gather (zero rows)",
       run_fuse_masked_gather},
      {"aicpu_to_host", "an AI CPU op fed only from the host runs on the host", run_aicpu_to_host},
  };
  return kPasses;
}

const PassInfo& find_pass(std::string_view name) {
  for (const PassInfo& p : graph_passes()) {
    if (p.name == name) return p;
  }
  std::vector<std::string> names;
  for (const PassInfo& p : graph_passes()) names.emplace_back(p.name);
  throw InputError(kCmd,
                   fmt::format("unknown pass '{}'; valid passes: {}", name, join(names, ", ")));
}

PassResult apply_passes(const Graph& graph, const std::vector<std::string>& names,
                        const PassOptions& options) {
  for (const std::string& n : names) (void)find_pass(n);
  PassResult r{graph, {}};
  for (const PassInfo& p : graph_passes()) {
    if (std::find(names.begin(), names.end(), p.name) == names.end()) continue;
    PassResult next = p.run(r.graph, options);
    if (next.changes.empty()) continue;
    r.graph = std::move(next.graph);
    for (GraphChange& c : next.changes) r.changes.push_back(std::move(c));
  }
  return r;
}

PassResult drop_redundant_tile(const Graph& graph, const PassOptions& options) {
  return run_drop_redundant_tile(graph, options);
}
PassResult tile_concat(const Graph& graph, const PassOptions& options) {
  return run_tile_concat(graph, options);
}
PassResult fold_bmm_batch(const Graph& graph, const PassOptions& options) {
  return run_fold_bmm_batch(graph, options);
}
PassResult int64_narrow(const Graph& graph, const PassOptions& options) {
  return run_int64_narrow(graph, options);
}
PassResult topk_valid_length(const Graph& graph, const PassOptions& options) {
  return run_topk_valid_length(graph, options);
}
PassResult fuse_masked_gather(const Graph& graph, const PassOptions& options) {
  return run_fuse_masked_gather(graph, options);
}
PassResult aicpu_to_host(const Graph& graph, const PassOptions& options) {
  return run_aicpu_to_host(graph, options);
}

}  // namespace npusim
