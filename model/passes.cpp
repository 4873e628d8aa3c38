// The pass registry and apply_passes(); each pass lives in its own file, model/passes/<name>.cpp,
// with what they share in model/passes/pass_util.h (the LLVM way: adding a rewrite touches one
// file and one line of the table below).
#include "model/passes.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/passes/pass_util.h"

namespace npusim {

namespace {


}  // namespace

using passes::join;
using passes::run_aicpu_to_host;
using passes::run_drop_redundant_tile;
using passes::run_fold_bmm_batch;
using passes::run_fuse_masked_gather;
using passes::run_int64_narrow;
using passes::run_tile_concat;
using passes::run_topk_valid_length;

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
  throw InputError(kCommandLine,
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
