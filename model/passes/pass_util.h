#pragma once
// What every graph pass shares (model/passes/*.cpp, one pass per file): text helpers for shape
// templates and attributes, and Work, a graph being rewritten through its tensor edges.
// Internal to npusim_model: not part of the library's interface (model/passes.h is).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/graph.h"
#include "model/passes.h"

namespace npusim::passes {

// ---- text helpers ---------------------------------------------------------------------------

/// `s` split at `sep`, each item trimmed.
[[nodiscard]] std::vector<std::string> split(std::string_view s, char sep);
/// `items` joined with `sep`.
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view sep);

/// A shape template ("B,8,32,300") as its dimensions; a scalar ("") has none.
using Dims = std::vector<std::string>;
[[nodiscard]] Dims dims_of(const std::string& shape);
[[nodiscard]] std::string shape_of(const Dims& d);

/// The shapes of a list ("a;b;c"); an empty list text has no shapes.
[[nodiscard]] std::vector<std::string> shapes_of(const std::string& list);
/// Per-tensor dtypes of a list; a single dtype applies to every tensor (as make_op reads it).
[[nodiscard]] std::vector<std::string> dtypes_of(const std::string& list, std::size_t tensors);

[[nodiscard]] std::optional<std::int64_t> as_int(const std::string& s);

/// A dimension template as k × B^b (b is 0 or 1): "7" -> {7, 0}, "B" -> {1, 1}, "B*4" -> {4, 1}.
struct DimTerm {
  std::int64_t k = 1;
  int b = 0;
};
[[nodiscard]] std::optional<DimTerm> dim_term(const std::string& d);
[[nodiscard]] std::string dim_text(const DimTerm& t);
/// The product of dimension templates, when it is still one (at most one B).
[[nodiscard]] std::optional<std::string> dim_product(const std::vector<std::string>& dims);
/// out / in for one dimension of a Tile: "1" when equal; nullopt when not a whole multiple.
[[nodiscard]] std::optional<std::string> dim_ratio(const std::string& in, const std::string& out);
[[nodiscard]] bool is_one(const std::string& d);
/// True when a shape template has exactly one element at every batch size.
[[nodiscard]] bool one_element(const std::string& shape);

[[nodiscard]] bool type_in(const std::string& type, std::initializer_list<std::string_view> types);
[[nodiscard]] std::optional<std::string_view> text_attr(const OpText& t, std::string_view key);
void set_attr(OpText& t, const std::string& key, const std::string& value);
void erase_attrs(OpText& t, std::initializer_list<std::string_view> keys);
/// True when one of the transpose attributes of a (Batch)MatMul is set.
[[nodiscard]] bool transposed(const OpText& t);
/// Op `i`'s placement (as given, else its family's).
[[nodiscard]] Placement placement_of(const Graph& g, std::size_t i);

inline const std::initializer_list<std::string_view> kTileTypes = {"Tile", "TileD"};
inline const std::initializer_list<std::string_view> kBmmTypes = {"BatchMatMul", "BatchMatMulV2",
                                                                  "BatchMatMulV3"};
inline const std::initializer_list<std::string_view> kConcatTypes = {"Concat", "ConcatD",
                                                                     "ConcatV2", "ConcatV2D"};

// ---- a graph being rewritten ------------------------------------------------------------------

/// The ops of a graph with every tensor edge written in `inputs` (edges an old-style file left to
/// `after` included) and every `after` explicit, so removing or moving an op never changes what
/// the others read or wait for. An op whose inputs all have edges takes its input shapes from
/// them; one with an input without edge, or reading a view, keeps its shapes written out.
class Work {
 public:
  explicit Work(const Graph& g);

  [[nodiscard]] const Graph& input() const { return g_; }
  [[nodiscard]] GraphOp& op(std::size_t i) { return ops_.at(i); }
  [[nodiscard]] const std::string& name_of(std::size_t i) const { return ops_.at(i).text.name; }
  [[nodiscard]] bool removed(std::size_t i) const { return removed_.at(i); }
  [[nodiscard]] std::size_t size() const { return ops_.size(); }

  /// Op `i`'s input shapes and dtypes as the input graph resolved them (updated by set_input).
  [[nodiscard]] const std::vector<std::string>& in_shapes(std::size_t i) const {
    return in_shapes_.at(i);
  }
  [[nodiscard]] const std::vector<std::string>& in_dtypes(std::size_t i) const {
    return in_dtypes_.at(i);
  }

  /// Index of the op called `name` (not removed), or nullopt.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const;
  /// Every input (op, input index) whose `inputs` entry reads `ref` ("op" or "op:k").
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> readers(const std::string& ref) const;
  /// Ops that read an output of op `i` or list it in `after`, in file order.
  [[nodiscard]] std::vector<std::size_t> dependents(std::size_t i) const;
  /// A name not used by any op or graph input: `base`, else base_2, base_3...
  [[nodiscard]] std::string fresh_name(const std::string& base) const;

  /// Input `j` of op `i` reads `ref` ("" = no edge) carrying a tensor of `shape` and `dtype`.
  /// The op's written shapes are kept (and updated) when it has them or when `ref` is "".
  void set_input(std::size_t i, std::size_t j, const std::string& ref, const std::string& shape,
                 const std::string& dtype);
  /// Op `i`'s input shapes written out (what it reads stays as it is even when a producer's
  /// output is reshaped: the written shape is a view of it).
  void pin_shapes(std::size_t i);
  /// Every reader of `from` reads `to` instead (same tensor shape and dtype).
  void redirect(const std::string& from, const std::string& to);
  /// In op j's `after`, `old` is replaced by `repl` (order kept, duplicates dropped).
  void replace_dep(std::size_t j, const std::string& old, const std::vector<std::string>& repl);
  /// Removes op `i` (nothing may read its outputs any more); ops that listed it in `after` wait
  /// for what it waited for (its producers and `after`) instead, or for `instead`.
  void remove(std::size_t i, std::optional<std::vector<std::string>> instead = std::nullopt);
  /// Moves op `i` first in the graph (it keeps its name, edges and `after`).
  void move_to_front(std::size_t i);
  /// Inserts `op` before op `before` (or at the end).
  void insert(std::size_t before, GraphOp op);
  /// The rewritten graph: removed ops gone, inserted ones in place. Graph::build validates it.
  [[nodiscard]] Graph build();

 private:
  const Graph& g_;
  std::vector<GraphOp> ops_;
  std::vector<std::vector<std::string>> in_shapes_;
  std::vector<std::vector<std::string>> in_dtypes_;
  std::vector<bool> removed_;
  std::vector<std::pair<std::size_t, GraphOp>> pending_;
  std::set<std::string> taken_;
};

/// A new op derived from `from` (it keeps its position for errors and its stream), with edges:
/// `inputs` and no `after`; shapes come from the edges unless set.
[[nodiscard]] GraphOp derived_op(const GraphOp& from, std::string name, std::string type,
                                 std::vector<std::string> inputs);

/// The result of a pass: the input graph when nothing changed.
[[nodiscard]] PassResult finish(Work& w, std::vector<GraphChange> changes);

/// The reference that names output `k` of op `name` ("op" for output 0).
[[nodiscard]] std::string output_ref(const std::string& name, std::size_t k);

// ---- the passes, one file each (model/passes/<name>.cpp) ---------------------------------------

PassResult run_drop_redundant_tile(const Graph& g, const PassOptions& options);
PassResult run_tile_concat(const Graph& g, const PassOptions& options);
PassResult run_fold_bmm_batch(const Graph& g, const PassOptions& options);
PassResult run_int64_narrow(const Graph& g, const PassOptions& options);
PassResult run_topk_valid_length(const Graph& g, const PassOptions& options);
PassResult run_fuse_masked_gather(const Graph& g, const PassOptions& options);
PassResult run_aicpu_to_host(const Graph& g, const PassOptions& options);

}  // namespace npusim::passes
