#pragma once
// Which ops of a scenario run their measured time, which an anchored one, which a prediction
// (model/measured.h), and the factor that turns the model's prediction at the scenario's
// conditions into an anchored time: measured / prediction at the measured conditions.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/graph.h"
#include "model/hw_spec.h"
#include "model/measured.h"
#include "model/predict.h"

namespace npusim::sim {

/// The pools an op holds cores of, and the budget it runs under in the scenario.
struct OpBudget {
  bool uses_cube = false;
  bool uses_vector = false;
  int cube_cores = 0;    ///< the stream's cube budget (the whole chip for a bypassing op)
  int vector_cores = 0;
  bool host = false;     ///< runs on the host: its whole predicted time is compared
};

/// Time sources of one scenario's ops, per gear.
class Anchoring {
 public:
  /// `measured_hw`: the spec of the graph's [graph.measured].hw when it is not `hw` (ignored
  /// when it is). Throws InputError at the [graph.measured] table when the graph was measured
  /// on another chip and `measured_hw` is null.
  Anchoring(const Graph& graph, const HwSpec& hw, std::shared_ptr<const HwSpec> measured_hw,
            std::vector<std::int64_t> gears);

  /// Classifies op `op` at every gear. Call once per op before source() / factor(). A measured
  /// op that cannot be anchored (no shapes, a zero prediction) runs measured, with a warning
  /// appended to `warnings`.
  void classify(std::size_t op, const OpBudget& budget, std::vector<std::string>& warnings);

  /// Where op `op`'s time comes from at gear index `gear_idx`.
  [[nodiscard]] TimeSource source(std::size_t op, std::size_t gear_idx) const {
    return sources_.at(op * gears_.size() + gear_idx);
  }

  /// measured_us / the model's time of op `op` at the measured conditions (device time, or the
  /// whole time of a host op) with the context `ctx`; cached per L2 hit ratio. Precondition:
  /// the op is anchored at some gear.
  [[nodiscard]] double factor(std::size_t op, const PredictContext& ctx);

  /// True when `name` (as [graph.measured].hw writes it) is the chip `hw`: its name, SoC
  /// version or display name, ignoring case and spaces.
  [[nodiscard]] static bool same_chip(const std::string& name, const HwSpec& hw);

 private:
  const Graph& graph_;
  const HwSpec& hw_;
  std::shared_ptr<const HwSpec> measured_hw_;  // null: the scenario's chip
  std::vector<std::int64_t> gears_;
  std::vector<TimeSource> sources_;             // op x gear
  std::vector<OpBudget> budgets_;               // per op
  std::unordered_map<std::uint64_t, double> factors_;
};

}  // namespace npusim::sim
