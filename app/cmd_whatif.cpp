// `npusim whatif`: the scenario's graph rewritten by each graph pass alone and by all of them,
// each variant simulated at the scenario's load and at its capacity under the P99 target.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/common.h"
#include "model/graph.h"
#include "model/passes.h"
#include "sim/scenario.h"
#include "sim/whatif.h"

namespace npusim::app {

namespace {

struct WhatifArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> passes;
  std::vector<std::string> assume_fits;
  std::string emit;
  bool json = false;
  bool waterfall = false;
  unsigned jobs = 0;
  double max_qps_tolerance = 0.02;
};

// The emitted graph file: what was changed, as comments, then the graph.
std::string emitted_graph(const sim::WhatifResult& r, const Graph& graph) {
  std::string out =
      fmt::format("# Graph of scenario '{}' rewritten by npusim whatif.\n", r.scenario);
  if (!r.all) {
    out += "# No selected pass applied: the graph is unchanged.\n";
  } else {
    out += fmt::format("# Passes applied in order: ");
    for (std::size_t i = 0; i < r.all->with.size(); ++i) {
      out += (i ? ", " : "") + r.all->with[i];
    }
    out += "\n";
    for (const GraphChange& c : r.all->changes) out += fmt::format("# - {}: {}\n", c.pass, c.what);
  }
  return out + "\n" + graph_to_toml(graph);
}

void run_whatif_cmd(const WhatifArgs& a) {
  const sim::Scenario sc = sim::load_scenario(resolve_scenario(a.scenario), a.sets);
  const HwSpec hw = sim::load_scenario_hw(sc, hw_spec_dirs());
  sim::WhatifSpec spec;
  spec.passes = a.passes;
  spec.options.assume_fits = a.assume_fits;
  spec.max_qps_tolerance = a.max_qps_tolerance;
  spec.waterfall = a.waterfall;
  spec.measured_hw = sim::load_measured_hw(sc, hw, hw_spec_dirs());
  const sim::WhatifResult r = sim::run_whatif(sc, hw, spec, a.jobs);
  // Render before writing anything, so a failure leaves no partial output.
  const std::string text = a.json ? sim::whatif_to_json(r) : sim::whatif_to_text(r);
  if (!a.emit.empty()) {
    if (!r.all) warn("no selected pass applies; --emit writes the graph unchanged");
    write_output_file(a.emit, emitted_graph(r, r.all ? r.all->graph : sc.graph));
  }
  std::cout << text << std::flush;
}

}  // namespace

void register_whatif(CLI::App& app) {
  auto args = std::make_shared<WhatifArgs>();
  std::string pass_list;
  for (const PassInfo& p : graph_passes())
    pass_list += fmt::format("\n  {}: {}", p.name, p.summary);
  CLI::App* cmd = app.add_subcommand(
      "whatif",
      "Rewrite the scenario's graph with each graph pass that applies (alone and all together) "
      "and predict the gain of each: latency at the scenario's load and QPS under the P99 target");
  cmd->add_option("scenario", args->scenario,
                  "scenario file, or the name of a bundled one (e.g. default)")
      ->required();
  cmd->add_option("--set", args->sets, "override a scenario value: section.key=value (repeatable)");
  cmd->add_option("--pass", args->passes,
                  "evaluate only this pass (repeatable; default: all). Passes:" + pass_list);
  cmd->add_option("--assume-fits", args->assume_fits,
                  "OPNAME: assert that this int64 op's values fit int32 (fp32 for TopK), as a "
                  "value_range attribute would (repeatable)");
  cmd->add_option("--emit", args->emit,
                  "write the graph rewritten by all selected passes to this graph TOML file");
  cmd->add_flag("--json", args->json, "print one JSON object (schema: docs/whatif.md)");
  cmd->add_flag("--waterfall", args->waterfall,
                "also apply the best-ranked passes cumulatively (the best, the two best, ...) and "
                "simulate each step");
  cmd->add_option("--jobs,-j", args->jobs, "threads (0 = all local cores)")->capture_default_str();
  cmd->add_option("--max-qps-tolerance", args->max_qps_tolerance,
                  "stop the rate search when the bracket is this share of the rate (0.001 to 0.5)")
      ->capture_default_str();
  cmd->callback([args] { run_whatif_cmd(*args); });
}

}  // namespace npusim::app
