// Classification of ops into measured / anchored / predicted and the anchoring factor
// (sim/anchoring.h, model/measured.h).
#include "sim/anchoring.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace npusim::sim {

namespace {

std::string squash(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c != ' ' && c != '_' && c != '-') {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

}  // namespace

bool Anchoring::same_chip(const std::string& name, const HwSpec& hw) {
  const std::string n = squash(name);
  return n == squash(hw.chip.name) || (!hw.chip.soc_version.empty() && n == squash(hw.chip.soc_version)) ||
         (!hw.chip.display_name.empty() && n == squash(hw.chip.display_name));
}

Anchoring::Anchoring(const Graph& graph, const HwSpec& hw,
                     std::shared_ptr<const HwSpec> measured_hw, std::vector<std::int64_t> gears)
    : graph_(graph), hw_(hw), gears_(std::move(gears)) {
  sources_.assign(graph.size() * gears_.size(), TimeSource::kPredicted);
  budgets_.resize(graph.size());
  const auto& m = graph.measured();
  if (!m || same_chip(m->hw, hw)) return;
  if (!measured_hw) {
    throw InputError(m->pos, fmt::format("[graph.measured].hw: the durations were measured on "
                                         "'{}' and the scenario runs on {}: anchoring them needs "
                                         "that chip's spec (a name in hw_specs)",
                                         m->hw, hw.chip.name));
  }
  measured_hw_ = std::move(measured_hw);
}

void Anchoring::classify(std::size_t op, const OpBudget& budget,
                         std::vector<std::string>& warnings) {
  budgets_.at(op) = budget;
  const GraphOp& gop = graph_.ops()[op];
  const std::size_t n = gears_.size();
  if (!gop.duration_us) return;  // predicted at every gear
  for (std::size_t g = 0; g < n; ++g) sources_[op * n + g] = TimeSource::kMeasured;
  const auto& m = graph_.measured();
  if (!m) return;  // no conditions recorded: the measured time wherever it runs
  const HwSpec& mhw = measured_hw_ ? *measured_hw_ : hw_;
  bool same_conditions = !measured_hw_;
  if (budget.uses_cube && budget.cube_cores != measured_cube_cores(*m, mhw)) {
    same_conditions = false;
  }
  if (budget.uses_vector && budget.vector_cores != measured_vector_cores(*m, mhw)) {
    same_conditions = false;
  }
  const std::string measured_shapes = measured_input_shapes(graph_, op);
  bool any_anchored = false;
  for (std::size_t g = 0; g < n; ++g) {
    const std::string now =
        substitute_batch(graph_.resolved(op).input_shapes, gears_[g], gop.shapes_pos);
    if (!same_conditions || !same_shape_list(now, measured_shapes)) {
      sources_[op * n + g] = TimeSource::kAnchored;
      any_anchored = true;
    }
  }
  if (!any_anchored) return;
  // An op the profile gave no shapes cannot be predicted meaningfully, nor can one the model
  // gives no time: it keeps its measured time, said once.
  std::string why;
  if (graph_.resolved(op).input_shapes.empty() && graph_.resolved(op).input_dtypes.empty()) {
    why = "it has no shapes";
  } else if (!(factor(op, PredictContext{}) > 0) ||
             !std::isfinite(factor(op, PredictContext{}))) {
    why = "the model predicts no time for it at the measured conditions";
  }
  if (why.empty()) return;
  for (std::size_t g = 0; g < n; ++g) sources_[op * n + g] = TimeSource::kMeasured;
  warnings.push_back(fmt::format("graph op '{}': measured under other conditions ({}), but {}: "
                                 "it runs its measured time",
                                 gop.text.name, m->hw, why));
}

double Anchoring::factor(std::size_t op, const PredictContext& ctx) {
  const auto l2 = static_cast<std::int64_t>(std::lround(ctx.l2_hit_ratio * 1024));
  const std::uint64_t key = (static_cast<std::uint64_t>(op) << 16) ^
                            static_cast<std::uint64_t>(l2 + 2048);
  const auto it = factors_.find(key);
  if (it != factors_.end()) return it->second;
  const auto& m = graph_.measured();
  NPUSIM_CHECK(m.has_value());
  const HwSpec& mhw = measured_hw_ ? *measured_hw_ : hw_;
  const OpBudget& b = budgets_.at(op);
  const CoreBudget at{measured_cube_cores(*m, mhw), measured_vector_cores(*m, mhw)};
  const OpCost c = predict(measured_desc(graph_, op), mhw, at, ctx);
  const double base = b.host ? c.duration_us : c.duration_us - c.critical_path.host_us;
  const double measured = *graph_.ops()[op].duration_us;
  const auto anchored = anchored_us(measured, 1.0, base);
  const double f = anchored ? *anchored : 0.0;
  factors_.emplace(key, f);
  return f;
}

}  // namespace npusim::sim
