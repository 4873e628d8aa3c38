// int64_narrow: int64 TopK, compares and FloorMod / FloorDiv / Mod run on int32 (TopK values on
// fp32) when their values fit, with Casts where an input or a result needs one.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "model/passes/pass_util.h"

namespace npusim::passes {

namespace {

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

bool is_int64_text(const std::string& d) {
  const auto p = parse_dtype(d);
  return p && is_int64(*p);
}

}  // namespace

PassResult run_int64_narrow(const Graph& g, const PassOptions& options) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const GraphOp& gop = g.ops()[i];
    const OpText& ot = g.resolved(i);
    const bool topk = type_in(ot.type, kNarrowTopK);
    const bool arith = type_in(ot.type, kNarrowArith);
    if (!topk && !arith && !type_in(ot.type, kNarrowCompare)) continue;
    const std::vector<std::string> ins = w.in_shapes(i);
    const std::vector<std::string> dts = w.in_dtypes(i);
    // TopK: only its values (input 0) are narrowed; k stays as it is.
    const std::size_t narrowable = topk ? std::min<std::size_t>(1, ins.size()) : ins.size();
    bool any = false;
    for (std::size_t j = 0; j < narrowable; ++j) any = any || is_int64_text(dts[j]);
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
    for (std::size_t j = 0; j < narrowable; ++j) {
      if (!is_int64_text(dts[j])) continue;
      const std::string src = g.source_ref(i, j);
      if (one_element(ins[j])) {
        // A threshold or divisor: a constant stored in the narrow type, no edge and no op.
        w.set_input(i, j, "", ins[j], narrow);
        notes.push_back(fmt::format("input {} ({}) is a one-element constant, stored as {} (no "
                                    "op)",
                                    j, ins[j].empty() ? "scalar" : ins[j], narrow));
        continue;
      }
      // A Cast from the narrow type feeds it: read the Cast's input instead.
      if (const auto p = g.producer(i, j)) {
        const OpText& pt = g.resolved(*p);
        const auto pd = parse_dtype(w.in_dtypes(*p)[0]);
        const auto nd = parse_dtype(narrow);
        if (type_in(pt.type, {"Cast", "CastD"}) && g.input_count(*p) == 1 && !w.removed(*p) &&
            pd && nd && *pd == *nd && same_shape_template(w.in_shapes(*p)[0], ins[j])) {
          w.set_input(i, j, g.source_ref(*p, 0), ins[j], narrow);
          std::string gone;
          if (w.dependents(*p).empty()) {
            w.remove(*p);
            gone = fmt::format("; Cast '{}' had no other reader and is removed", pt.name);
          }
          notes.push_back(fmt::format("input {} ({}) is read before Cast '{}', which made it "
                                      "INT64 from {}: no Cast{}",
                                      j, ins[j], pt.name, narrow, gone));
          continue;
        }
      }
      const std::string cast_name = w.fresh_name(fmt::format("{}_cast{}", ot.name, j));
      GraphOp cast = derived_op(gop, cast_name, "Cast", {src});
      if (src.empty()) {
        cast.text.input_shapes = ins[j];
        cast.text.input_dtypes = "INT64";
        cast.shapes_declared = true;
        cast.dtypes_declared = true;
      }
      cast.text.output_shapes = ins[j];
      cast.text.output_dtypes = narrow;
      cast.text.attrs.emplace_back("dst_type", narrow);
      cast.after = *w.op(i).after;
      w.set_input(i, j, cast_name, ins[j], narrow);
      w.insert(i, std::move(cast));
      notes.push_back(
          fmt::format("Cast '{}' INT64 -> {} of input {} ({})", cast_name, narrow, j, ins[j]));
    }
    // Results: compares give BOOL either way; FloorMod and TopK values come out narrow, and a
    // Cast back to INT64 keeps what later ops read unchanged.
    GraphOp& nop = w.op(i);
    if ((arith || topk) && g.outputs_known(i)) {
      std::vector<std::string> outs = shapes_of(ot.output_shapes);
      std::vector<std::string> ods = dtypes_of(ot.output_dtypes, outs.size());
      if (!outs.empty() && !ods.empty() && is_int64_text(ods[0])) {
        if (!nop.text.output_shapes.empty()) {
          std::vector<std::string> declared = dtypes_of(nop.text.output_dtypes, outs.size());
          if (!declared.empty()) declared[0] = narrow;
          nop.text.output_dtypes = join(declared, ";");
        }
        const std::string back = w.fresh_name(ot.name + "_cast_out");
        GraphOp cast = derived_op(gop, back, "Cast", {ot.name});
        cast.text.output_shapes = outs[0];
        cast.text.output_dtypes = "INT64";
        cast.text.attrs.emplace_back("dst_type", "INT64");
        w.redirect(ot.name, back);
        for (std::size_t j = 0; j < w.size(); ++j) {
          if (!w.removed(j) && j != i) w.replace_dep(j, ot.name, {back});
        }
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
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
