// `npusim simulate SCENARIO [--set k=v]... [--json] [--trace FILE]`: one card serving the
// scenario's traffic; a five-second text summary, or JSON, and optionally the timeline as a
// Chrome trace. When the chip's overlay carries prediction intervals, two more runs at their
// P10 and P90 factors give the ranges of QPS, P50 and P99.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/common.h"
#include "model/calibration.h"
#include "model/error.h"
#include "sim/card_sim.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim/sweep.h"

namespace npusim::app {

namespace {

namespace fs = std::filesystem;

struct SimulateArgs {
  std::string scenario;
  std::vector<std::string> sets;
  bool json = false;
  std::string trace;
  std::size_t trace_max_spans = 500'000;
  unsigned jobs = 0;
};

// Which interval tables the factors come from: "holdout rows: cube 140, elementwise 372; other
// families pooled (731 rows)". A family with no table of its own and no pooled one is unscaled,
// and so is an op whose graph gives a measured duration: the source says how many those are.
std::string interval_source(const HwSpec& hw, const Graph& graph) {
  std::string own;
  for (const auto& [name, e] : hw.intervals) {
    if (name != "all") own += fmt::format("{}{} {}", own.empty() ? "" : ", ", name, e.rows);
  }
  const auto all = hw.intervals.find("all");
  std::string s = own.empty()
                      ? fmt::format("holdout of {} rows, all families pooled", all->second.rows)
                      : fmt::format("holdout rows: {}; other families {}", own,
                                    all == hw.intervals.end()
                                        ? std::string("unscaled")
                                        : fmt::format("pooled ({} rows)", all->second.rows));
  std::size_t measured = 0;
  for (const GraphOp& op : graph.ops()) measured += op.duration_us ? 1 : 0;
  if (measured > 0) {
    s += fmt::format("; {} of {} graph ops have measured durations, not scaled", measured,
                     graph.size());
  }
  return s;
}

void run(const SimulateArgs& a) {
  const sim::Scenario sc = sim::load_scenario(resolve_scenario(a.scenario), a.sets);
  const HwSpec hw = sim::load_scenario_hw(sc, hw_spec_dirs());
  sim::SimOptions opt;
  opt.measured_hw = sim::load_measured_hw(sc, hw, hw_spec_dirs());
  opt.trace = !a.trace.empty();
  opt.trace_max_spans = a.trace_max_spans;
  // With prediction intervals, the scenario runs twice more at the P10 and at the P90 factors;
  // the three runs are independent (same seed, own Simulator each) and run side by side.
  const bool calibrated = !hw.intervals.empty();
  std::vector<sim::SimResult> runs(calibrated ? 3 : 1);
  sim::run_parallel(runs.size(), a.jobs, [&](std::size_t i) {
    sim::SimOptions o = opt;
    if (i > 0) {
      o = sim::SimOptions{};
      o.measured_hw = opt.measured_hw;
      o.device_time_scale = interval_factors(hw, i == 1 ? IntervalEnd::kP10 : IntervalEnd::kP90);
    }
    runs[i] = sim::simulate(sc, hw, o);
  });
  const sim::SimResult& r = runs[0];
  for (const std::string& w : r.warnings) warn(w);
  if (opt.trace) {
    if (r.trace.size() >= opt.trace_max_spans) {
      warn(fmt::format("the trace stops after {} spans (--trace-max-spans)", opt.trace_max_spans));
    }
    write_output_file(a.trace, sim::trace_to_json(r));
  }
  std::optional<sim::IntervalRuns> interval;
  if (calibrated) {
    interval =
        sim::IntervalRuns{interval_source(hw, sc.graph), std::move(runs[1]), std::move(runs[2])};
  }
  std::cout << (a.json ? sim::result_to_json(r, interval) : sim::result_to_text(r, interval))
            << std::flush;
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Simulate one card serving a scenario's traffic: QPS, latency percentiles, utilisation, "
      "cards needed");
  cmd->add_option("scenario", args->scenario,
                  "scenario file, or the name of a bundled one (e.g. default)")
      ->required();
  cmd->add_option("--set", args->sets,
                  "override a scenario value: section.key=value (repeatable), e.g. "
                  "--set deployment.streams=4");
  cmd->add_flag("--json", args->json, "print the result as JSON");
  cmd->add_option("--trace", args->trace,
                  "write the timeline as Chrome-trace JSON (chrome://tracing, Perfetto, "
                  "MindStudio Insight)");
  cmd->add_option("--trace-max-spans", args->trace_max_spans,
                  "stop recording the timeline after this many spans")
      ->capture_default_str();
  cmd->add_option("--jobs,-j", args->jobs,
                  "threads for the P10/P90 runs of a calibrated chip (0 = all local cores)")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace npusim::app
