// topk_valid_length: a TopK over padded rows (attribute valid_fraction) sorts only the valid
// prefix of each row.
#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "model/passes/pass_util.h"

namespace npusim::passes {

PassResult run_topk_valid_length(const Graph& g, const PassOptions& /*options*/) {
  Work w(g);
  std::vector<GraphChange> changes;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const GraphOp& gop = g.ops()[i];
    if (!type_in(gop.text.type, {"TopK", "TopKV2", "TopKD"})) continue;
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
    if (g.input_count(i) == 0) continue;
    const Dims d = dims_of(w.in_shapes(i)[0]);
    const auto n = as_int(d.empty() ? std::string() : d.back());
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
  return finish(w, std::move(changes));
}

}  // namespace npusim::passes
