// npusim graph from-profile: one step of a profile as a graph TOML the simulator runs.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "app/common.h"
#include "model/error.h"
#include "profile/discover.h"
#include "profile/graph_export.h"

namespace npusim::app {

namespace {

struct GraphArgs {
  std::string path;
  std::int64_t step = -1;
  bool step_given = false;
  std::string output;
  bool strict = false;
};

void run_from_profile(const GraphArgs& a) {
  const profile::Discovery found = profile::discover_profiles(a.path, profile::ReadOptions{a.strict});
  if (found.profiles.size() > 1) {
    std::string names;
    for (const auto& p : found.profiles) names += "\n  " + p.folder.string();
    throw InputError({a.path, 0, 0},
                     fmt::format("holds {} profiles; point at one of them:{}",
                                 found.profiles.size(), names));
  }
  const auto& src = found.profiles.front();
  const auto g = profile::graph_from_profile(
      src, a.step_given ? std::optional<std::int64_t>(a.step) : std::nullopt);
  write_output_file(a.output, g.toml);
  std::cerr << fmt::format("wrote {}: {} ops of step {} from {} (dropped {} communication, {} "
                           "other, {} without type)\n",
                           a.output, g.ops, g.step >= 0 ? std::to_string(g.step) : "-", src.name,
                           g.dropped_communication, g.dropped_other, g.dropped_untyped);
  if (g.without_shapes > 0) {
    warn(fmt::format("{} ops have no usable shapes (N/A in the profile, or rejected by the op "
                     "model: the reason is a comment above each in the file); the simulator can "
                     "only use their measured duration",
                     g.without_shapes));
  }
}

}  // namespace

void register_graph(CLI::App& app) {
  CLI::App* graph = app.add_subcommand("graph", "Build graph files");
  graph->require_subcommand(1);
  auto args = std::make_shared<GraphArgs>();
  CLI::App* cmd = graph->add_subcommand(
      "from-profile", "One step of a profile as a graph TOML (ops per stream, start-time order)");
  cmd->add_option("path", args->path, "kernel table (CSV, profiler .db, timeline JSON), PROF_* or *_ascend_pt folder")->required();
  cmd->add_option("--step", args->step, "step id to export (default: the last step)");
  cmd->add_option("-o,--output", args->output, "graph TOML to write ('-' for stdout)")
      ->required();
  cmd->add_flag("--strict", args->strict, "fail at the first malformed or truncated row of a profile file instead of skipping and counting it");
  cmd->callback([args, cmd] {
    GraphArgs a = *args;
    a.step_given = cmd->count("--step") > 0;
    run_from_profile(a);
  });
}

}  // namespace npusim::app
