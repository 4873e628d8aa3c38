#pragma once
// Graph passes: the rewrites tuning engineers do by hand on Ascend graphs, each a function
// Graph -> {Graph, changes}, so `npusim whatif` can predict what each one buys before anyone
// edits a model. DESIGN.md "model" lists them; docs/whatif.md says when each applies.
//
// Data flow. A pass matches the producer of an input through the graph's tensor edges
// (Graph::source, Graph::uses), never by comparing shape text; shapes it reads are the ones the
// graph resolved (declared or inferred, model/shape_infer.h). A graph written without `inputs`
// has the edges Graph::build recovers from `after` (see model/graph.h). A rewritten graph has
// every edge written in `inputs` and an explicit `after` on every op, so removing or moving an
// op never changes what the others read or wait for. Each pass is one file in model/passes/.
//
// The passes run in a fixed order (graph_passes()); applying several applies them in that
// order, each on the output of the one before.

#include <string>
#include <string_view>
#include <vector>

#include "model/graph.h"

namespace npusim {

/// One edit a pass made to a graph.
struct GraphChange {
  std::string pass;              ///< the pass's name
  std::vector<std::string> ops;  ///< ops of the input graph it concerns, the rewritten op first
  std::string what;              ///< what changed, naming ops and shapes
  std::string why;               ///< why that pays off on the chip
};

/// A rewritten graph and what was changed to get it (empty: the pass did not apply).
struct PassResult {
  Graph graph;
  std::vector<GraphChange> changes;
};

/// What the user asserts about the graph beyond what it says.
struct PassOptions {
  /// Ops whose int64 values the user asserts fit the narrower type int64_narrow picks (int32;
  /// for TopK values fp32, exact to 2^24), as an op's `value_range` attribute would say.
  std::vector<std::string> assume_fits;
};

/// A pass: rewrites `graph`; never throws on a valid graph.
using PassFn = PassResult (*)(const Graph& graph, const PassOptions& options);

/// A pass's name, one-line summary and function.
struct PassInfo {
  const char* name;
  const char* summary;
  PassFn run;
};

/// Every pass, in the fixed order they are applied in.
[[nodiscard]] const std::vector<PassInfo>& graph_passes();

/// The pass called `name`. Throws InputError at "<command line>" listing the valid names.
[[nodiscard]] const PassInfo& find_pass(std::string_view name);

/// Applies the passes named (any order, duplicates ignored) in the fixed order of
/// graph_passes(), each on the previous one's output. Throws InputError for an unknown name.
[[nodiscard]] PassResult apply_passes(const Graph& graph, const std::vector<std::string>& names,
                                      const PassOptions& options = {});

/// A Tile (or TileD) whose output only feeds BatchMatMul inputs that broadcast over the tiled
/// batch axes anyway is removed; the BatchMatMul reads the untiled tensor.
[[nodiscard]] PassResult drop_redundant_tile(const Graph& graph, const PassOptions& options = {});

/// A Concat of Tiles with equal multiples (1 on the concat axis, each Tile feeding only the
/// Concat) becomes a Tile of a Concat; a Concat whose inputs are all one tensor (attribute
/// `same_source = true`) becomes a Tile along the concat axis.
[[nodiscard]] PassResult tile_concat(const Graph& graph, const PassOptions& options = {});

/// A BatchMatMul whose second operand is 1 on a batch axis where the first is not folds that
/// axis into M (fewer, taller products that fill the cube's fractals). Free when every batch axis
/// between it and M is 1 in the first operand; otherwise Transposes before and after are added.
[[nodiscard]] PassResult fold_bmm_batch(const Graph& graph, const PassOptions& options = {});

/// int64 TopK, compares (Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual) and FloorMod /
/// FloorDiv / Mod run on int32 (TopK on fp32) when their values fit: attribute
/// `value_range = "lo,hi"` or PassOptions::assume_fits. Casts are added where needed.
[[nodiscard]] PassResult int64_narrow(const Graph& graph, const PassOptions& options = {});

/// A TopK with attribute `valid_fraction` in (0, 1) is given `valid_length` =
/// ceil(fraction × last dim): it sorts only the valid prefix.
[[nodiscard]] PassResult topk_valid_length(const Graph& graph, const PassOptions& options = {});

/// An AI CPU Where that masks indices, feeding a Gather whose output is multiplied by a row mask,
/// becomes one Gather that yields zero rows for negative indices: the Where, the mask Mul and
/// the mask ops nothing else reads are removed.
[[nodiscard]] PassResult fuse_masked_gather(const Graph& graph, const PassOptions& options = {});

/// An AI CPU op whose inputs all come from the host side (a root of the graph, or only host ops
/// before it) runs on the host CPU instead, first in the graph.
[[nodiscard]] PassResult aicpu_to_host(const Graph& graph, const PassOptions& options = {});

}  // namespace npusim
