#pragma once
// What a graph's measured durations were measured under, and the anchoring rule that carries a
// measurement over to other conditions (docs/graphs.md "Measured durations and anchoring").
//
// A graph whose ops carry `duration_us` (e.g. one from `npusim graph from-profile`) may say where
// they were taken:
//
//   [graph.measured]
//   hw = "ascend910b3"    # the chip (hw_specs name)
//   cube_cores = 24       # optional: the core budget per stream then (default: the chip's cores)
//   vector_cores = 48     # optional
//   batch = 8             # optional: the value of B then (needed when measured ops' shapes use B)
//
// and an op may record the input shapes it ran with when they differ from its own `shapes`
// (`measured_shapes`, concrete, plus `measured_output_shapes` for a type without a shape rule).
//
// Under the same conditions (same chip, same core budget for the op's pool, same input shapes)
// an op runs for its measured time ("measured"). When a scenario changes one of them, its time is
//   measured x prediction(new conditions) / prediction(measured conditions)   ("anchored"):
// the measurement keeps what the model gets wrong about this kernel, the model says how much the
// change matters. Ops without a measurement are "predicted". A graph without [graph.measured]
// keeps the old rule: a measured duration replaces the prediction wherever it runs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/error.h"
#include "model/hw_spec.h"
#include "model/op_desc.h"

namespace npusim {

class Graph;
class TableReader;

/// [graph.measured]: the conditions the graph's `duration_us` values were measured under.
struct MeasuredConditions {
  std::string hw;                     ///< chip name as in hw_specs (HwSpec::chip.name)
  std::optional<int> cube_cores;      ///< core budget per stream; nullopt: the whole chip
  std::optional<int> vector_cores;    ///< core budget per stream; nullopt: the whole chip
  std::optional<std::int64_t> batch;  ///< the value of B during the measurement
  SourcePos pos;                      ///< the table, for errors found later
};

/// Where an op's time comes from in a simulation.
enum class TimeSource : std::uint8_t {
  kPredicted,  ///< no measurement: the model's prediction
  kMeasured,   ///< measured under the same conditions: the measured time
  kAnchored,   ///< measured under other conditions: measured x model ratio
};
/// "predicted", "measured", "anchored".
[[nodiscard]] const char* time_source_name(TimeSource s) noexcept;

/// Reads a [graph.measured] table (calls finish()).
[[nodiscard]] MeasuredConditions read_measured_table(TableReader& t);

/// The table as TOML text ("[graph.measured]\nhw = ...\n"), for graph_to_toml.
[[nodiscard]] std::string measured_to_toml(const MeasuredConditions& m);

/// The input shapes op `i` of `graph` was measured with (concrete): its `measured_shapes`, else
/// its own input shapes at [graph.measured].batch (or as they are, when they do not mention B).
/// Precondition: the graph has measured conditions and op `i` a duration. Throws InputError at
/// the op when its shapes mention B and the table gives no batch.
[[nodiscard]] std::string measured_input_shapes(const Graph& graph, std::size_t i);

/// The output shapes of op `i` as it was measured: `measured_output_shapes`, else the shape
/// rule on its measured_shapes, else (no measured_shapes) its own outputs at the measured batch.
[[nodiscard]] std::string measured_output_shapes(const Graph& graph, std::size_t i);

/// True when two shape lists are the same shapes ("8,4;1" and "8, 4;1" are).
[[nodiscard]] bool same_shape_list(std::string_view a, std::string_view b);

/// Op `i` as it was measured: its type, dtypes and attributes with measured_input_shapes() and
/// the outputs those give (the shape rule; `measured_output_shapes`; or its own outputs when the
/// inputs are its own). Throws InputError at the op when the outputs cannot be known.
[[nodiscard]] OpDesc measured_desc(const Graph& graph, std::size_t i);

/// Checks what can be checked without a chip: every measured op's measured shapes make an op.
/// Throws InputError at the offending op.
void check_measured_ops(const Graph& graph);

/// measured_us x predicted_new_us / predicted_at_measured_us. nullopt when the prediction at the
/// measured conditions is not positive (nothing to take a ratio of).
[[nodiscard]] std::optional<double> anchored_us(double measured_us, double predicted_new_us,
                                                double predicted_at_measured_us) noexcept;

/// The core budget of a pool during the measurement: the table's value, else the chip's count.
[[nodiscard]] int measured_cube_cores(const MeasuredConditions& m, const HwSpec& measured_hw);
[[nodiscard]] int measured_vector_cores(const MeasuredConditions& m, const HwSpec& measured_hw);

}  // namespace npusim
