// tile_concat: a Concat of Tiles with equal multiples becomes a Tile of a Concat; a Concat of one
// tensor with itself becomes a Tile along the concat axis.
#include <fmt/format.h>

#include <algorithm>

#include "model/passes/pass_util.h"

namespace npusim::passes {

namespace {

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

}  // namespace

PassResult run_tile_concat(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t c = 0; c < g.size(); ++c) {
    if (w.removed(c)) continue;
    const OpText& ct = g.resolved(c);
    if (!type_in(ct.type, kConcatTypes)) continue;
    const std::vector<std::string> ins = w.in_shapes(c);
    if (ins.size() < 2) continue;
    const Dims d0 = dims_of(ins[0]);
    // Every input is data (the same rank): an axis given as a tensor is not handled.
    if (!std::all_of(ins.begin(), ins.end(),
                     [&](const std::string& s) { return dims_of(s).size() == d0.size(); })) {
      continue;
    }
    const auto axis = concat_axis(ct, d0.size());
    if (!axis) continue;
    const std::vector<std::string> dts = w.in_dtypes(c);
    const std::string fmt0 =
        shapes_of(ct.input_formats).empty() ? std::string() : split(ct.input_formats, ';').front();

    // (b) one tensor concatenated with itself: every input reads the same edge, or (a graph
    // whose edges cannot show it) the Concat says `same_source = true`.
    const std::string src0 = g.source_ref(c, 0);
    bool one_source = !src0.empty();
    for (std::size_t j = 1; j < ins.size(); ++j) one_source = one_source && g.source_ref(c, j) == src0;
    const bool said = text_attr(ct, "same_source").value_or("") == "true";
    const bool same_shapes = std::all_of(ins.begin(), ins.end(), [&](const std::string& s) {
      return same_shape_template(s, ins[0]);
    });
    if ((one_source || said) && same_shapes) {
      Dims out = d0;
      const auto t = dim_term(out[*axis]);
      if (!t) continue;
      out[*axis] = dim_text(DimTerm{t->k * static_cast<std::int64_t>(ins.size()), t->b});
      Dims mult(d0.size(), "1");
      mult[*axis] = std::to_string(ins.size());
      GraphOp& op = w.op(c);
      OpText& nt = op.text;
      const std::string old_type = nt.type;
      nt.type = "Tile";
      nt.input_formats = fmt0.empty() ? std::string() : fmt::format("{};ND", fmt0);
      // The Tile reads the tensor and its multiples (a constant of rank elements, no edge).
      op.inputs = std::vector<std::string>{src0, ""};
      op.text.input_shapes = fmt::format("{};{}", ins[0], d0.size());
      op.text.input_dtypes = fmt::format("{};INT64", dts[0]);
      op.shapes_declared = true;
      op.dtypes_declared = true;
      if (nt.output_shapes.empty()) nt.output_shapes = shape_of(out);
      if (nt.output_dtypes.empty()) nt.output_dtypes = dts[0];
      erase_attrs(nt, {"concat_dim", "axis", "N", "same_source"});
      set_attr(nt, "multiples", join(mult, ","));
      changes.push_back(
          {"tile_concat",
           {ct.name},
           fmt::format("{} '{}' of {} copies of one {} tensor{} -> Tile (multiples {})", old_type,
                       ct.name, ins.size(), ins[0],
                       one_source ? fmt::format(" ('{}')", src0) : std::string(" (same_source)"),
                       join(mult, ",")),
           fmt::format("a Concat reads each of its {} inputs from HBM; a Tile reads the one "
                       "tensor once and writes the same output",
                       ins.size())});
      continue;
    }

    // (a) a Concat of Tiles with equal multiples: a Tile of the Concat of their inputs.
    std::vector<std::size_t> prods;
    std::vector<std::string> tile_ins;
    std::vector<std::string> tile_srcs;
    std::optional<Dims> mult;
    bool ok = true;
    for (std::size_t k = 0; k < ins.size() && ok; ++k) {
      const auto p = g.producer(c, k);
      ok = p.has_value() && !w.removed(*p) && g.source(c, k).output == 0;
      if (!ok) break;
      const OpText& tt = g.resolved(*p);
      ok = type_in(tt.type, kTileTypes) && g.outputs_known(*p) && g.input_count(*p) >= 1 &&
           g.uses(*p).size() == 1 && w.dependents(*p).size() == 1 && w.in_dtypes(*p)[0] == dts[k];
      if (!ok) break;
      const Dims a = dims_of(w.in_shapes(*p)[0]);
      const Dims b = dims_of(shapes_of(tt.output_shapes)[0]);
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
        prods.push_back(*p);
        tile_ins.push_back(w.in_shapes(*p)[0]);
        tile_srcs.push_back(g.source_ref(*p, 0));
      }
    }
    if (!ok || !mult || std::all_of(mult->begin(), mult->end(), is_one)) continue;
    // The new Concat's output: the tile inputs summed along the axis.
    Dims cat = dims_of(tile_ins[0]);
    DimTerm along{0, -1};
    for (const std::string& s : tile_ins) {
      const auto v = dim_term(dims_of(s)[*axis]);
      if (!v || (along.b >= 0 && v->b != along.b)) {
        ok = false;
        break;
      }
      along = DimTerm{along.k + v->k, v->b};
    }
    if (!ok) continue;
    cat[*axis] = dim_text(along);
    std::vector<std::string> names{ct.name};
    for (const std::size_t p : prods) names.push_back(w.name_of(p));
    const std::string tile_name = w.fresh_name(ct.name + "_tile");
    GraphOp tile = derived_op(g.ops()[c], tile_name, "Tile", {ct.name, ""});
    tile.text.input_shapes = fmt::format("{};{}", shape_of(cat), cat.size());
    tile.text.input_dtypes = fmt::format("{};INT64", dts[0]);
    tile.shapes_declared = true;
    tile.dtypes_declared = true;
    tile.text.attrs.emplace_back("multiples", join(*mult, ","));
    w.redirect(ct.name, tile_name);
    for (std::size_t j = 0; j < w.size(); ++j) {
      if (!w.removed(j)) w.replace_dep(j, ct.name, {tile_name});
    }
    tile.after = std::vector<std::string>{};
    for (std::size_t k = 0; k < prods.size(); ++k) {
      w.set_input(c, k, tile_srcs[k], tile_ins[k], dts[k]);
    }
    GraphOp& nc = w.op(c);
    nc.text.output_shapes = shape_of(cat);
    if (nc.text.output_dtypes.empty()) nc.text.output_dtypes = dts[0];
    nc.text.output_dtypes = split(nc.text.output_dtypes, ';').front();
    for (const std::size_t p : prods) w.remove(p);
    w.insert(c + 1, std::move(tile));
    changes.push_back(
        {"tile_concat", names,
         fmt::format("Concat '{}' of {} Tiles (multiples {}) -> Concat of their inputs ({}) then "
                     "Tile '{}'",
                     ct.name, prods.size(), join(*mult, ","), shape_of(cat), tile_name),
         "the Concat now moves the untiled tensors, and one Tile writes the output once instead "
         "of each Tile writing its copies and the Concat reading them back"});
  }
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
