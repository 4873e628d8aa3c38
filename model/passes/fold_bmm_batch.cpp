// fold_bmm_batch: a BatchMatMul whose second operand is 1 on batch axes where the first is not
// folds those axes into M (fewer, taller products that fill the cube's fractals).
#include <fmt/format.h>

#include "model/passes/pass_util.h"

namespace npusim::passes {

PassResult run_fold_bmm_batch(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpText& bt = g.resolved(i);
    if (!type_in(bt.type, kBmmTypes) || transposed(bt) || g.input_count(i) != 2) continue;
    const std::vector<std::string> ins = w.in_shapes(i);
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
      } else if (same_shape_template(a[d], b[d])) {
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
    const std::vector<std::string> dts = w.in_dtypes(i);
    const std::string out_dtype =
        bt.output_dtypes.empty() ? dts.front() : split(bt.output_dtypes, ';').front();

    // Readers of the product keep reading the shape they read (a view of the folded result).
    for (const auto& [c, j] : w.readers(bt.name)) {
      (void)j;
      w.pin_shapes(c);
    }
    // The operands are read as views of what their edges carry: same elements, folded shape.
    w.pin_shapes(i);
    std::vector<std::string> names{bt.name};
    std::string what;
    GraphOp& op = w.op(i);
    op.text.output_shapes = shape_of(new_out);
    op.text.output_dtypes = out_dtype;
    if (free_layout) {
      w.set_input(i, 0, g.source_ref(i, 0), shape_of(new_a), dts[0]);
      w.set_input(i, 1, g.source_ref(i, 1), shape_of(new_b), dts[1]);
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
        permuted_a.push_back(a[p]);
        perm_text.push_back(std::to_string(p));
      }
      const std::string in_name = w.fresh_name(bt.name + "_fold_in");
      GraphOp tin = derived_op(g.ops()[i], in_name, "Transpose", {g.source_ref(i, 0)});
      if (g.source_ref(i, 0).empty()) {
        tin.text.input_shapes = ins[0];
        tin.text.input_dtypes = dts[0];
        tin.shapes_declared = true;
        tin.dtypes_declared = true;
      }
      tin.text.output_shapes = shape_of(permuted_a);
      tin.text.output_dtypes = dts[0];
      tin.text.attrs.emplace_back("perm", join(perm_text, ","));
      tin.after = *w.op(i).after;
      // The result comes out as (kept..., folded..., M, N): the inverse permutation restores
      // the original order.
      Dims permuted_out;
      for (std::size_t k = 0; k < perm.size(); ++k) permuted_out.push_back(out_orig[perm[k]]);
      std::vector<std::string> inverse(perm.size());
      for (std::size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = std::to_string(k);
      const std::string out_name = w.fresh_name(bt.name + "_fold_out");
      GraphOp tout = derived_op(g.ops()[i], out_name, "Transpose", {bt.name});
      tout.text.input_shapes = shape_of(permuted_out);  // a view of the folded product
      tout.text.input_dtypes = out_dtype;
      tout.shapes_declared = true;
      tout.dtypes_declared = true;
      tout.text.output_shapes = shape_of(out_orig);
      tout.text.output_dtypes = out_dtype;
      tout.text.attrs.emplace_back("perm", join(inverse, ","));
      w.redirect(bt.name, out_name);
      for (std::size_t j = 0; j < w.size(); ++j) {
        if (!w.removed(j)) w.replace_dep(j, bt.name, {out_name});
      }
      w.set_input(i, 0, in_name, shape_of(new_a), dts[0]);
      w.set_input(i, 1, g.source_ref(i, 1), shape_of(new_b), dts[1]);
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
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
