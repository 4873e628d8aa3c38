// Measurement conditions of a graph and the anchoring rule (model/measured.h).
#include "model/measured.h"

#include <fmt/format.h>

#include <limits>

#include "model/graph.h"
#include "model/shape_infer.h"
#include "model/toml_reader.h"

namespace npusim {

const char* time_source_name(TimeSource s) noexcept {
  switch (s) {
    case TimeSource::kMeasured:
      return "measured";
    case TimeSource::kAnchored:
      return "anchored";
    case TimeSource::kPredicted:
      break;
  }
  return "predicted";
}

MeasuredConditions read_measured_table(TableReader& t) {
  MeasuredConditions m;
  m.pos = t.pos();
  m.hw = t.string("hw");
  if (m.hw.empty()) t.fail("hw", "must name the chip the durations were measured on");
  constexpr std::int64_t kMaxCores = 4096;
  if (auto c = t.optional_integer("cube_cores", 1, kMaxCores)) m.cube_cores = static_cast<int>(*c);
  if (auto v = t.optional_integer("vector_cores", 1, kMaxCores)) {
    m.vector_cores = static_cast<int>(*v);
  }
  m.batch = t.optional_integer("batch", 1, std::numeric_limits<std::int32_t>::max());
  t.finish();
  return m;
}

std::string measured_to_toml(const MeasuredConditions& m) {
  std::string out = "[graph.measured]\n";
  out += fmt::format("hw = {}\n", toml_string(m.hw));
  if (m.cube_cores) out += fmt::format("cube_cores = {}\n", *m.cube_cores);
  if (m.vector_cores) out += fmt::format("vector_cores = {}\n", *m.vector_cores);
  if (m.batch) out += fmt::format("batch = {}\n", *m.batch);
  return out;
}

namespace {

const MeasuredConditions& conditions(const Graph& graph) {
  NPUSIM_CHECK(graph.measured().has_value());
  return *graph.measured();
}

// The value of B during the measurement, for an op whose shapes mention it.
std::int64_t measured_batch(const Graph& graph, std::size_t i) {
  const MeasuredConditions& m = conditions(graph);
  if (!m.batch) {
    const GraphOp& op = graph.ops()[i];
    throw InputError(op.pos, fmt::format("graph op '{}' has a duration_us and shapes in B, but "
                                         "[graph.measured] gives no `batch` (the value of B it "
                                         "was measured at) and the op no `measured_shapes`",
                                         op.text.name));
  }
  return *m.batch;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ";" : "") + v[k];
  return s;
}

}  // namespace

std::string measured_input_shapes(const Graph& graph, std::size_t i) {
  const GraphOp& op = graph.ops()[i];
  NPUSIM_CHECK(op.duration_us.has_value());
  if (op.measured_shapes) return *op.measured_shapes;
  const std::string& own = graph.resolved(i).input_shapes;
  if (!mentions_batch(own)) return own;
  return substitute_batch(own, measured_batch(graph, i), op.shapes_pos);
}

std::string measured_output_shapes(const Graph& graph, std::size_t i) {
  const GraphOp& op = graph.ops()[i];
  if (op.measured_output_shapes) return *op.measured_output_shapes;
  if (!op.measured_shapes) {
    // Its own shapes: its own outputs at the same batch.
    const std::string& out = graph.resolved(i).output_shapes;
    return mentions_batch(out) ? substitute_batch(out, measured_batch(graph, i),
                                                  op.output_shapes_pos)
                               : out;
  }
  OpText t = graph.resolved(i);
  t.input_shapes = *op.measured_shapes;
  const auto inferred = infer_output_templates(t, split_shape_list(t.input_shapes),
                                               split_shape_list(t.input_dtypes),
                                               op.measured_shapes_pos);
  if (!inferred) {
    throw InputError(op.measured_shapes_pos,
                     fmt::format("graph op '{}': no shape rule gives the outputs of {} for its "
                                 "measured_shapes: add measured_output_shapes",
                                 op.text.name, op.text.type));
  }
  return join(inferred->shapes);
}

OpDesc measured_desc(const Graph& graph, std::size_t i) {
  const GraphOp& op = graph.ops()[i];
  OpText t = graph.resolved(i);
  t.input_shapes = measured_input_shapes(graph, i);
  if (mentions_batch(t.input_shapes)) {
    throw InputError(op.measured_shapes_pos,
                     fmt::format("graph op '{}': measured_shapes must be concrete (no B): '{}'",
                                 op.text.name, t.input_shapes));
  }
  t.output_shapes = measured_output_shapes(graph, i);
  return make_op(t, op.measured_shapes ? op.measured_shapes_pos : op.pos);
}

bool same_shape_list(std::string_view a, std::string_view b) {
  const auto x = split_shape_list(a);
  const auto y = split_shape_list(b);
  if (x.size() != y.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (!same_shape_template(x[k], y[k])) return false;
  }
  return true;
}

void check_measured_ops(const Graph& graph) {
  if (!graph.measured()) return;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (graph.ops()[i].duration_us) (void)measured_desc(graph, i);
  }
}

std::optional<double> anchored_us(double measured_us, double predicted_new_us,
                                  double predicted_at_measured_us) noexcept {
  if (!(predicted_at_measured_us > 0) || !(predicted_new_us >= 0)) return std::nullopt;
  return measured_us * (predicted_new_us / predicted_at_measured_us);
}

int measured_cube_cores(const MeasuredConditions& m, const HwSpec& measured_hw) {
  return m.cube_cores.value_or(measured_hw.chip.cube_cores);
}

int measured_vector_cores(const MeasuredConditions& m, const HwSpec& measured_hw) {
  return m.vector_cores.value_or(measured_hw.chip.vector_cores);
}

}  // namespace npusim
