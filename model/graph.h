#pragma once
// Graph: a DAG of operators (Boost.Graph) loaded from the `[graph]` tables of a graph file or a
// scenario. Shapes are templates in the batch symbol `B` ("B,4000;400,1"), so one graph serves
// every batch gear: instantiate() turns an op into an OpDesc for a given batch size.
//
// TOML layout (a standalone graph file, or the same tables inside a scenario):
//
//   [graph]
//   name = "rec ranking"
//   [[graph.op]]
//   name = "emb"                 # unique
//   type = "GatherV2"
//   shapes = "400,50;B,4000;1"   # input shapes; B = batch size of the batch being run
//   dtypes = "FLOAT16;INT64;INT32"
//   formats = "ND;ND;ND"         # optional
//   output_shapes = "B,4000,50"  # optional (also output_dtypes, output_formats)
//   placement = "vector"         # optional: cube | vector | mix | aicpu | host
//   after = ["prev"]             # optional; absent = the previous op in the file; [] = none
//   stream = 0                   # optional, informational (kept from a profile)
//   duration_us = 35.2           # optional: replaces the model's prediction
//   attrs = { index_dup_ratio = "0.3" }   # optional, string / number / boolean values
//
// A dimension is an integer, `B`, or `B*k` / `k*B` with a positive integer k.

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"
#include "model/op_desc.h"

namespace npusim {

class TableReader;

/// One op of a graph as written: text fields whose shapes may mention `B`.
struct GraphOp {
  OpText text;                                    ///< shapes are templates in `B`
  std::optional<double> duration_us;              ///< fixed time replacing the model's prediction
  std::int64_t stream = 0;                        ///< stream id from a profile; informational
  std::optional<std::vector<std::string>> after;  ///< nullopt = the previous op in the file
  SourcePos pos;                                  ///< the op's table
  SourcePos after_pos;                            ///< the `after` value (or the op's table)
  SourcePos shapes_pos;                           ///< the `shapes` value (or the op's table)
};

/// The dependency DAG: vertex i is op i; an edge u -> v means v runs after u.
using GraphDag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

/// A validated graph: unique names, known dependencies, no cycle, every op instantiable.
class Graph {
 public:
  /// Builds and validates a graph. Throws InputError at the offending op's file:line for a
  /// duplicate name, an unknown `after` name, a cycle (naming an op on it), a bad shape
  /// template, or an op make_op() rejects (checked at batch size 1).
  [[nodiscard]] static Graph build(std::string name, std::vector<GraphOp> ops);

  /// The graph's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Ops in file order.
  [[nodiscard]] const std::vector<GraphOp>& ops() const noexcept { return ops_; }
  /// Number of ops.
  [[nodiscard]] std::size_t size() const noexcept { return ops_.size(); }
  /// The dependency DAG.
  [[nodiscard]] const GraphDag& dag() const noexcept { return dag_; }
  /// A topological order (ties broken by file order, so it is deterministic).
  [[nodiscard]] const std::vector<std::size_t>& topo_order() const noexcept { return topo_; }
  /// Indices of the ops op `i` depends on, ascending.
  [[nodiscard]] std::vector<std::size_t> predecessors(std::size_t i) const;
  /// Index of the op called `name`, or nullopt.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const;
  /// True when op `i`'s shapes mention the batch symbol.
  [[nodiscard]] bool batch_dependent(std::size_t i) const { return batch_dependent_.at(i); }
  /// Op `i` as an OpDesc for batch size `batch` (>= 1). Throws InputError at the op's position.
  [[nodiscard]] OpDesc instantiate(std::size_t i, std::int64_t batch) const;

 private:
  std::string name_;
  std::vector<GraphOp> ops_;
  GraphDag dag_;
  std::vector<std::size_t> topo_;
  std::vector<bool> batch_dependent_;
};

/// One dimension of a shape template: k, or k·B when `batch`.
struct DimTemplate {
  std::int64_t k = 1;
  bool batch = false;
};
/// The dimension grammar of shape templates, in one place: an integer ("7", any sign: make_op
/// judges its value), "B", or "B*k" / "k*B" with a positive integer k (spaces allowed around
/// the parts). nullopt for anything else.
[[nodiscard]] std::optional<DimTemplate> parse_dim_template(std::string_view dim) noexcept;

/// Replaces the batch symbol in a shape list ("B,4000;400,1" at 8 -> "8,4000;400,1").
/// Throws InputError at `pos` for a dimension that is neither an integer nor B, B*k, k*B.
[[nodiscard]] std::string substitute_batch(std::string_view shapes, std::int64_t batch,
                                           const SourcePos& pos);
/// True when a shape list mentions the batch symbol B.
[[nodiscard]] bool mentions_batch(std::string_view shapes) noexcept;

/// Reads a `[graph]` table: either `file = "x.toml"` (relative to `base_dir`, a graph file) or
/// `name` plus `[[graph.op]]` tables. Calls finish() on the tables it reads.
[[nodiscard]] Graph read_graph_table(TableReader& graph, const std::filesystem::path& base_dir);

/// Loads a graph file and describes it in one line (for `npusim validate`). Throws InputError.
[[nodiscard]] std::string check_graph_file(const std::filesystem::path& file);

/// Loads a standalone graph file (a `[graph]` table and nothing else).
[[nodiscard]] Graph load_graph_file(const std::filesystem::path& file);

/// The graph as a standalone graph file's TOML text: every field of every op as given, so
/// load_graph_file() of the text yields the same ops (names, types, shape templates, dtypes,
/// formats, placements, attributes, `after`, stream, duration_us) in the same order.
[[nodiscard]] std::string graph_to_toml(const Graph& graph);

/// `s` as a TOML basic string: quoted, with quotes, backslashes and control characters escaped.
[[nodiscard]] std::string toml_string(std::string_view s);

}  // namespace npusim
