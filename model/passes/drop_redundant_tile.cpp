// drop_redundant_tile: a Tile that only copies a tensor along batch axes of size 1, read only by
// BatchMatMuls that broadcast those axes by themselves, is removed.
#include <fmt/format.h>

#include "model/passes/pass_util.h"

namespace npusim::passes {

PassResult run_drop_redundant_tile(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t t = 0; t < g.size(); ++t) {
    const OpText& tt = g.resolved(t);
    if (!type_in(tt.type, kTileTypes) || !g.outputs_known(t) || g.input_count(t) < 1) continue;
    const std::string in_shape = w.in_shapes(t)[0];
    const std::vector<std::string> outs = shapes_of(tt.output_shapes);
    if (outs.size() != 1) continue;
    const Dims in = dims_of(in_shape);
    const Dims out = dims_of(outs[0]);
    if (in.size() != out.size() || in.size() < 3) continue;
    const std::size_t r = in.size();
    // Only batch axes tiled, and only from 1: what a broadcasting BatchMatMul does by itself.
    bool broadcastable = in[r - 1] == out[r - 1] && in[r - 2] == out[r - 2];
    for (std::size_t d = 0; d + 2 < r && broadcastable; ++d) {
      broadcastable = same_shape_template(in[d], out[d]) || is_one(in[d]);
    }
    if (!broadcastable || same_shape_template(in_shape, outs[0])) continue;
    // Every reader of the Tile is a BatchMatMul operand whose other operand spans the tiled
    // axes, so the product keeps its batch when it broadcasts instead. Ops that only wait for
    // the Tile (`after`) then wait for what the Tile waited for.
    const std::vector<TensorUse> uses = g.uses(t);
    if (uses.empty()) continue;
    bool ok = true;
    for (const TensorUse& u : uses) {
      const OpText& ct = g.resolved(u.op);
      ok = type_in(ct.type, kBmmTypes) && u.input < 2 && g.input_count(u.op) >= 2 &&
           same_shape_template(w.in_shapes(u.op)[u.input], outs[0]);
      if (!ok) break;
      const Dims other = dims_of(w.in_shapes(u.op)[1 - u.input]);
      for (std::size_t d = 0; d + 2 < r && ok; ++d) {
        if (same_shape_template(in[d], out[d])) continue;
        // right-aligned batch axis of the other operand
        const std::ptrdiff_t od = static_cast<std::ptrdiff_t>(other.size()) -
                                  static_cast<std::ptrdiff_t>(r) + static_cast<std::ptrdiff_t>(d);
        ok = od >= 0 && same_shape_template(other[static_cast<std::size_t>(od)], out[d]);
      }
      if (!ok) break;
    }
    if (!ok) continue;
    std::vector<std::string> names{tt.name};
    std::vector<std::string> user_names;
    const std::string src = g.source_ref(t, 0);
    for (const TensorUse& u : uses) {
      w.set_input(u.op, u.input, src, in_shape, w.in_dtypes(t)[0]);
      names.push_back(w.name_of(u.op));
      user_names.push_back(fmt::format("'{}'", w.name_of(u.op)));
    }
    w.remove(t);
    const bool single = user_names.size() == 1;
    changes.push_back(
        {"drop_redundant_tile", names,
         fmt::format("removed {} '{}' ({} -> {}); {} read{} {} ({}) and broadcast{} it", tt.type,
                     tt.name, in_shape, outs[0], join(user_names, ", "), single ? "s" : "",
                     src.empty() ? std::string("the untiled tensor") : "'" + src + "'", in_shape,
                     single ? "s" : ""),
         "BatchMatMul broadcasts batch axes of size 1 by itself: the Tile only wrote copies of "
         "the tensor to HBM for the BatchMatMul to read back"});
  }
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
