// The simulator's entry points: simulate(), SimRun (a run taken in steps) and the load-time
// checks, all over the card model (sim/card_model.h).

#include "sim/card_sim.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "sim/card_model.h"

namespace npusim::sim {

using card::CardModel;

void check_scenario_fits(const Scenario& scenario, const HwSpec& hw) {
  // Building the model runs every load-time check; nothing is scheduled until run().
  const auto model = std::make_unique<CardModel>(scenario, hw, SimOptions{});
}

std::string check_scenario_file(const std::filesystem::path& file,
                                const std::vector<std::filesystem::path>& hw_dirs) {
  const Scenario sc = load_scenario(file);
  const HwSpec hw = load_scenario_hw(sc, hw_dirs);
  check_scenario_fits(sc, hw);
  return fmt::format("scenario {}: {} ops on {}, {} stream(s), {} gear(s) up to {}, {} arrivals",
                     sc.info.name, sc.graph.size(), hw.chip.name, sc.deployment.streams,
                     sc.deployment.gears.size(), sc.deployment.gears.back(),
                     arrival_name(sc.workload.arrival));
}

SimResult simulate(const Scenario& scenario, const HwSpec& hw, const SimOptions& options) {
  auto model = std::make_unique<CardModel>(scenario, hw, options);
  return model->run();
}

struct SimRun::Impl {
  Scenario scenario;  // the model keeps a reference: it lives here, at a fixed address
  std::unique_ptr<CardModel> model;
};

SimRun::SimRun(Scenario scenario, const HwSpec& hw, bool stop_when_over, const SimOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->scenario = std::move(scenario);
  impl_->model = std::make_unique<CardModel>(impl_->scenario, hw, options);
  impl_->model->watch_p99(stop_when_over);
  impl_->model->begin();
}

SimRun::~SimRun() = default;
SimRun::SimRun(SimRun&&) noexcept = default;
SimRun& SimRun::operator=(SimRun&&) noexcept = default;

void SimRun::advance(std::int64_t measured) { impl_->model->advance(measured); }

void SimRun::advance_to_end() { impl_->model->advance(-1); }

bool SimRun::ended() const { return impl_->model->ended(); }

bool SimRun::settled_over() const {
  const auto& w = impl_->model->watch();
  return w && w->settled_over();
}

bool SimRun::done() const { return ended() || impl_->model->stopped_over(); }

std::int64_t SimRun::measured_done() const { return impl_->model->measured_done(); }

std::int64_t SimRun::over() const {
  const auto& w = impl_->model->watch();
  return w ? w->over() : 0;
}

std::int64_t SimRun::resolved() const {
  const auto& w = impl_->model->watch();
  return w ? w->resolved() : measured_done();
}

std::uint64_t SimRun::events() const { return impl_->model->events(); }

double SimRun::p99_so_far_ms() const { return impl_->model->p99_so_far_ms(); }

const Scenario& SimRun::scenario() const { return impl_->scenario; }

SimResult SimRun::finish() { return impl_->model->end(); }

}  // namespace npusim::sim
