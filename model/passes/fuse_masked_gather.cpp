// fuse_masked_gather: a Where / Select / SelectV2 that masks indices, feeding a Gather whose rows
// are then multiplied by a row mask, becomes one Gather that yields zero rows for negative
// indices. The select runs on the AI CPU in a graph written for it (the seed's default scenario)
// and on the AI Core as SelectV2 in one imported from ONNX, where ATC maps Where to SelectV2:
// either way the select, the mask and its Mul are kernels that one Gather makes unnecessary.
#include <fmt/format.h>

#include "model/passes/pass_util.h"

namespace npusim::passes {

PassResult run_fuse_masked_gather(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t wi = 0; wi < g.size(); ++wi) {
    const OpText& wt = g.resolved(wi);
    if (w.removed(wi) || !type_in(wt.type, {"Where", "Select", "SelectV2"})) continue;
    if (g.input_count(wi) != 3) continue;  // select(condition, indices, fill)
    const bool aicpu = placement_of(g, wi) == Placement::kAicpu;
    if (!g.outputs_known(wi) || shapes_of(wt.output_shapes).size() != 1) continue;
    // select(condition, indices, fill): the Gather reads its result as indices.
    for (const TensorUse& gu : g.uses(wi)) {
      const std::size_t gi = gu.op;
      const OpText& gt = g.resolved(gi);
      if (!type_in(gt.type, {"Gather", "GatherV2", "GatherV2D"}) || gu.input != 1) continue;
      if (!g.outputs_known(gi)) continue;
      const std::vector<std::string> gout = shapes_of(gt.output_shapes);
      if (gout.size() != 1 || dims_of(gout[0]).empty()) continue;
      Dims row = dims_of(gout[0]);
      row.back().assign(1, '1');  // not = "1": GCC 12 misfires -Wrestrict on it in unity builds
      // The mask Mul: the gathered rows times a per-row mask (last axis 1).
      std::optional<std::size_t> mul;
      std::size_t mask_input = 0;
      for (const TensorUse& mu : g.uses(gi)) {
        const OpText& mt = g.resolved(mu.op);
        if (mt.type != "Mul" || g.input_count(mu.op) != 2 || mu.output != 0) continue;
        const std::size_t other = 1 - mu.input;
        if (same_shape_template(w.in_shapes(mu.op)[other], shape_of(row))) {
          mul = mu.op;
          mask_input = other;
        }
      }
      if (!mul || g.uses(gi).size() != 1) continue;
      const std::string gname = gt.name;
      const std::string mname = w.name_of(*mul);
      // The Gather reads the Where's indices directly; what read the masked rows reads the
      // Gather's.
      w.set_input(gi, 1, g.source_ref(wi, 1), w.in_shapes(wi)[1], w.in_dtypes(wi)[1]);
      set_attr(w.op(gi).text, "negative_index", "zero");
      w.redirect(mname, gname);
      // What waited for the Where waits for the indices' producer; for the Mul, for the Gather.
      std::vector<std::string> index_dep;
      if (const auto p = g.producer(wi, 1)) index_dep.push_back(g.ops()[*p].text.name);
      // Ops that fed only the masking (nothing else reads or waits for them) go too.
      std::vector<std::size_t> dead;
      for (const std::size_t from : {wi, *mul}) {
        for (std::size_t j = 0; j < g.input_count(from); ++j) {
          if (from == wi && j == 1) continue;
          if (from == *mul && j != mask_input) continue;
          if (const auto p = g.producer(from, j)) dead.push_back(*p);
        }
      }
      w.remove(*mul, std::vector<std::string>{gname});
      w.remove(wi, index_dep);
      std::vector<std::string> names{gname, wt.name, mname};
      for (std::size_t k = 0; k < dead.size(); ++k) {
        const std::size_t d = dead[k];
        if (w.removed(d) || d == gi || !w.dependents(d).empty()) continue;
        for (const std::size_t p : g.predecessors(d)) dead.push_back(p);
        names.push_back(w.name_of(d));
        w.remove(d);
      }
      std::vector<std::string> gone(names.begin() + 1, names.end());
      for (std::string& s : gone) s = "'" + s + "'";
      changes.push_back(
          {"fuse_masked_gather", names,
           fmt::format("{} '{}' yields zero rows for negative indices; removed {}", gt.type, gname,
                       join(gone, ", ")),
           aicpu ? "the AI CPU Where costs a dispatch and a device -> host -> device shape round "
                   "trip; a Gather that zeroes the rows of negative indices needs neither the "
                   "Where nor the mask Mul"
                 : fmt::format("the {} on the AI Core, the mask and its Mul are kernels of their "
                               "own, each a launch and a pass over the indices or the gathered "
                               "rows; a Gather that zeroes the rows of negative indices needs "
                               "none of them",
                               wt.type)});
      break;
    }
  }
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
