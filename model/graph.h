#pragma once
// Graph: a DAG of operators (Boost.Graph) with tensor edges, loaded from the `[graph]` tables of
// a graph file or a scenario. Shapes are templates in the batch symbol `B` ("B,4000;400,1"), so
// one graph serves every batch gear: instantiate() turns an op into an OpDesc for a batch size.
//
// TOML layout (a standalone graph file, or the same tables inside a scenario):
//
//   [graph]
//   name = "rec ranking"
//   [graph.measured]             # optional: where the ops' duration_us were measured
//   hw = "ascend910b3"           #   (chip, core budget, batch: model/measured.h)
//   [[graph.input]]              # a tensor from outside the graph: model input or constant
//   name = "ids"                 # unique among inputs and ops
//   shape = "B,4000"             # template in B ("" = a scalar)
//   dtype = "INT64"
//   format = "ND"                # optional
//   constant = false             # optional, informational: weights / initializers
//   [[graph.op]]
//   name = "emb"                 # unique
//   type = "GatherV2"
//   inputs = ["table", "ids", "axis0"]  # tensor edges, one per input (see below)
//   shapes = "400,50;B,4000;1"   # input shapes; optional with `inputs` (then checked)
//   dtypes = "FLOAT16;INT64;INT32"  # optional with `inputs` (then checked)
//   formats = "ND;ND;ND"         # optional
//   output_shapes = "B,4000,50"  # optional: inferred (model/shape_infer.h); checked when given
//   placement = "vector"         # optional: cube | vector | mix | aicpu | host
//   after = ["prev"]             # optional, pure ordering (see below)
//   stream = 0                   # optional, informational (kept from a profile)
//   duration_us = 35.2           # optional: measured time (see model/measured.h)
//   measured_shapes = "400,50;8,4000;1"  # optional: input shapes it was measured with
//   measured_output_shapes = "8,4000,50"  # optional: their outputs (types without a shape rule)
//   attrs = { index_dup_ratio = "0.3" }   # optional, string / number / boolean values
//
// A dimension is an integer, `B`, or `B*k` / `k*B` with a positive integer k.
//
// Tensor edges. Each entry of `inputs` says where one input tensor comes from: "op:k" (output k
// of op `op`), "op" (its output 0), the name of a `[[graph.input]]`, or "" (no edge: the
// tensor's shape and dtype are the op's `shapes` / `dtypes` at that position, e.g. an absent
// optional input written as shape "" and dtype UNDEFINED). A name that is an op or input as a
// whole is taken whole, so names may contain ':'. An op depends on the producers of its inputs
// and on the ops in `after`.
//
// Old files (no `inputs`). An op without `inputs` keeps the old rules: `shapes` and `dtypes`
// are required; absent `after` means "the previous op in the file"; and its edges are
// recovered from `after`: input j comes from output k of an op in `after` when that is the only
// output there with input j's shape template and dtype (otherwise it has no edge). An op with
// `inputs` and no `after` depends on its producers only.

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"
#include "model/measured.h"
#include "model/op_desc.h"
#include "model/shape_template.h"

namespace npusim {

class TableReader;

/// One op of a graph as written: text fields whose shapes may mention `B`. Shapes and dtypes
/// the file leaves out (possible with `inputs`) are empty here; Graph::resolved() has them.
struct GraphOp {
  OpText text;                                    ///< shapes are templates in `B`
  std::optional<double> duration_us;              ///< measured time (model/measured.h)
  /// Input shapes the duration was measured with (concrete), when not the op's own shapes at
  /// [graph.measured].batch; and their outputs, for a type without a shape rule.
  std::optional<std::string> measured_shapes;
  std::optional<std::string> measured_output_shapes;
  SourcePos measured_shapes_pos;  ///< the `measured_shapes` value (or the op's table)
  std::int64_t stream = 0;                        ///< stream id from a profile; informational
  std::optional<std::vector<std::string>> after;  ///< nullopt: previous op (no `inputs`) or none
  /// Tensor edges, one per input: "op:k", "op", a graph input's name, or "" (no edge).
  /// nullopt = an old-style op (edges recovered from `after`, see the file comment).
  std::optional<std::vector<std::string>> inputs;
  SourcePos pos;         ///< the op's table
  SourcePos after_pos;   ///< the `after` value (or the op's table)
  SourcePos shapes_pos;  ///< the `shapes` value (or the op's table)
  SourcePos inputs_pos;  ///< the `inputs` value (or the op's table)
  SourcePos output_shapes_pos;  ///< the `output_shapes` value (or the op's table)
  bool shapes_declared = true;  ///< false: `shapes` left out (inputs give them)
  bool dtypes_declared = true;  ///< false: `dtypes` left out (inputs give them)
  /// Shapes judged as for an old-style op even with `inputs` (a rule's disagreement or failure
  /// is not an error): set by the passes on ops whose edges were recovered. Not in the TOML.
  bool lenient = false;
};

/// A tensor that enters the graph from outside: a model input or a constant (weights).
struct GraphInput {
  std::string name;
  std::string shape;   ///< template in `B`; "" = a scalar
  std::string dtype;   ///< e.g. "INT64"
  std::string format;  ///< may be empty: ND
  bool constant = false;  ///< informational: weights / initializers (sizes matter, not values)
  SourcePos pos;
};

/// Where one input tensor of an op comes from.
struct TensorSource {
  enum class Kind : std::uint8_t {
    kNone,        ///< no edge: the op's own `shapes` / `dtypes` give the tensor
    kOp,          ///< output `output` of op `index`
    kGraphInput,  ///< graph input `index`
  };
  Kind kind = Kind::kNone;
  std::size_t index = 0;
  std::size_t output = 0;
  /// True when an edge was recovered from `after` (an old-style op), not written in `inputs`.
  bool recovered = false;
  friend bool operator==(const TensorSource&, const TensorSource&) = default;
};

/// One use of an op's output: input `input` of op `op` reads output `output`.
struct TensorUse {
  std::size_t op = 0;
  std::size_t input = 0;
  std::size_t output = 0;
};

/// The dependency DAG: vertex i is op i; an edge u -> v means v runs after u.
using GraphDag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

/// Where an op's output shapes come from.
enum class OutputsFrom : std::uint8_t {
  kUnknown,     ///< no declaration and no shape rule: readers must declare the shapes they read
  kDeclared,    ///< `output_shapes` (checked against the rule when there is one)
  kInferred,    ///< the shape rule (model/shape_infer.h)
  kUpperBound,  ///< the shape rule, data-dependent: an upper bound
};

/// A validated graph: unique names, known dependencies, no cycle, every op instantiable.
class Graph {
 public:
  /// Builds and validates a graph. Throws InputError at the offending op's file:line for a
  /// duplicate name, an unknown `after` name, a cycle (naming an op on it), a bad shape
  /// template, or an op make_op() rejects (checked at batch size 1).
  /// Also an unknown name in `inputs`, an output index the producer does not have, an input
  /// whose shape is unknown (no edge with a known shape and no `shapes`), and declared shapes or
  /// dtypes that disagree with the edges' or with the inferred outputs.
  [[nodiscard]] static Graph build(std::string name, std::vector<GraphOp> ops,
                                   std::vector<GraphInput> inputs = {});

  /// The graph's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Ops in file order.
  [[nodiscard]] const std::vector<GraphOp>& ops() const noexcept { return ops_; }
  /// Graph inputs in file order.
  [[nodiscard]] const std::vector<GraphInput>& graph_inputs() const noexcept { return inputs_; }
  /// Op `i` with every shape and dtype filled in: inputs from the edges, outputs declared or
  /// inferred (output_shapes stays empty when no rule knows them; see outputs_known()).
  [[nodiscard]] const OpText& resolved(std::size_t i) const { return resolved_.at(i); }
  /// True when op `i`'s output shapes and dtypes are known (declared or inferred).
  [[nodiscard]] bool outputs_known(std::size_t i) const { return outputs_known_.at(i); }
  /// Where op `i`'s output shapes come from, and the rule's note (e.g. why an upper bound).
  [[nodiscard]] OutputsFrom outputs_from(std::size_t i) const { return outputs_from_.at(i); }
  [[nodiscard]] const std::string& outputs_note(std::size_t i) const { return outputs_note_.at(i); }
  /// Where input `j` of op `i` comes from (Kind::kNone when it has no edge).
  [[nodiscard]] const TensorSource& source(std::size_t i, std::size_t j) const {
    return sources_.at(i).at(j);
  }
  /// Number of input tensors of op `i`.
  [[nodiscard]] std::size_t input_count(std::size_t i) const { return sources_.at(i).size(); }
  /// The op whose output feeds input `j` of op `i`, or nullopt (graph input, no edge).
  [[nodiscard]] std::optional<std::size_t> producer(std::size_t i, std::size_t j) const;
  /// Every input that reads an output of op `i`, ordered by consumer then input.
  [[nodiscard]] std::vector<TensorUse> uses(std::size_t i) const;
  /// What input `j` of op `i` reads, as an `inputs` entry would name it ("op:k", "op", an input's
  /// name, or "" for no edge).
  [[nodiscard]] std::string source_ref(std::size_t i, std::size_t j) const;
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
  /// The conditions the ops' duration_us were measured under ([graph.measured]); nullopt: not
  /// recorded (a measured duration then replaces the prediction wherever the op runs).
  [[nodiscard]] const std::optional<MeasuredConditions>& measured() const noexcept {
    return measured_;
  }
  /// Records the measurement conditions (graph readers, passes keeping them). Throws InputError
  /// at a measured op whose measured shapes make no op (check_measured_ops).
  void set_measured(std::optional<MeasuredConditions> m);

 private:
  void resolve(std::size_t i);

  std::string name_;
  std::vector<GraphOp> ops_;
  std::vector<GraphInput> inputs_;
  std::vector<OpText> resolved_;
  std::vector<bool> outputs_known_;
  std::vector<OutputsFrom> outputs_from_;
  std::vector<std::string> outputs_note_;
  std::vector<std::vector<std::string>> out_shapes_;  // per op, per output (when known)
  std::vector<std::vector<std::string>> out_dtypes_;
  std::vector<std::vector<TensorSource>> sources_;
  GraphDag dag_;
  std::vector<std::size_t> topo_;
  std::vector<bool> batch_dependent_;
  std::optional<MeasuredConditions> measured_;
};

/// Reads a `[graph]` table: either `file = "x.toml"` (relative to `base_dir`, a graph file) or
/// `name` plus `[[graph.op]]` tables. Calls finish() on the tables it reads.
[[nodiscard]] Graph read_graph_table(TableReader& graph, const std::filesystem::path& base_dir);

/// Loads a graph file and describes it in one line (for `npusim validate`). Throws InputError.
[[nodiscard]] std::string check_graph_file(const std::filesystem::path& file);

/// Every op of the graph on one line: its inputs (where each comes from, shape and dtype) and
/// its outputs with where they come from (declared, inferred, upper bound, unknown). For
/// `npusim validate --shapes`.
[[nodiscard]] std::string describe_shapes(const Graph& graph);

/// Loads a standalone graph file (a `[graph]` table and nothing else).
[[nodiscard]] Graph load_graph_file(const std::filesystem::path& file);

/// The graph as a standalone graph file's TOML text: every field of every op as given, so
/// load_graph_file() of the text yields the same ops (names, types, shape templates, dtypes,
/// formats, placements, attributes, `after`, stream, duration_us) in the same order.
[[nodiscard]] std::string graph_to_toml(const Graph& graph);

/// `s` as a TOML basic string: quoted, with quotes, backslashes and control characters escaped.
[[nodiscard]] std::string toml_string(std::string_view s);

}  // namespace npusim
