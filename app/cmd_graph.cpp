// npusim graph from-profile | from-onnx | from-ge | example-onnx: graph TOML files the simulator
// runs, from a profile, an ONNX model or a GE graph dump.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "app/common.h"
#include "app/profile_input.h"
#include "frontend/import.h"
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
  std::string hw = "auto";
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
  // The chip the durations were measured on, recorded so a scenario on another chip (or with a
  // core limit, or other shapes) anchors them instead of taking them as they are.
  std::string measured_hw;
  if (a.hw == "auto") {
    try {
      const ProfileSamples ps = load_samples({a.path}, profile::ReadOptions{a.strict});
      std::string note;
      measured_hw = hw_for_profiles("auto", {}, ps.chip, &note).chip.name;
      std::cerr << note << '\n';
    } catch (const InputError& e) {
      warn(fmt::format("--hw auto: the chip could not be inferred ({}); the graph records no "
                       "[graph.measured], so its durations run as they are on any chip; give "
                       "--hw NAME",
                       e.detail()));
    }
  } else if (a.hw != "none") {
    measured_hw = load_hw(a.hw).chip.name;
  }
  const auto g = profile::graph_from_profile(
      src, a.step_given ? std::optional<std::int64_t>(a.step) : std::nullopt, measured_hw);
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

struct ImportArgs {
  std::string path;
  std::string batch_dim;
  std::vector<std::string> set_dims;
  std::string output;
};

// "seq=128" -> {"seq", 128}; a malformed one is an error at <command line>.
std::pair<std::string, std::int64_t> parse_set_dim(const std::string& text) {
  const auto eq = text.find('=');
  std::int64_t v = 0;
  bool ok = eq != std::string::npos && eq > 0;
  if (ok) {
    const std::string num = text.substr(eq + 1);
    std::size_t used = 0;
    try {
      v = std::stoll(num, &used);
    } catch (const std::exception&) {
      ok = false;
    }
    ok = ok && used == num.size() && v >= 1;
  }
  if (!ok) {
    throw InputError({"<command line>", 0, 0},
                     fmt::format("--set-dim {}: expected NAME=N with a positive integer N", text));
  }
  return {text.substr(0, eq), v};
}

void report_import(const frontend::ImportResult& r, const std::string& source,
                   const std::string& output) {
  for (const auto& w : r.warnings) warn(frontend::format_warning(w));
  std::cerr << fmt::format("wrote {}: {} ops from {} nodes of {} ({} constants; {})\n", output,
                           r.graph.size(), r.nodes, source, r.constants,
                           r.batch_symbol.empty()
                               ? std::string("fixed shapes: no batch dimension")
                               : fmt::format("batch dimension '{}' is B", r.batch_symbol));
}

void run_from_onnx(const ImportArgs& a) {
  frontend::OnnxImportOptions o;
  o.batch_dim = a.batch_dim;
  for (const auto& s : a.set_dims) o.set_dims.push_back(parse_set_dim(s));
  const auto r = frontend::import_onnx(a.path, o);
  write_output_file(a.output, graph_to_toml(r.graph));
  report_import(r, a.path, a.output);
}

void run_from_ge(const ImportArgs& a) {
  const auto r = frontend::import_ge_dump(a.path);
  write_output_file(a.output, graph_to_toml(r.graph));
  report_import(r, a.path, a.output);
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
  cmd->add_option("--hw", args->hw,
                  "chip the profile was taken on, written as [graph.measured] so other "
                  "conditions anchor the durations: a name, auto (inferred from the rows) or "
                  "none")
      ->capture_default_str();
  cmd->callback([args, cmd] {
    GraphArgs a = *args;
    a.step_given = cmd->count("--step") > 0;
    run_from_profile(a);
  });

  auto onnx = std::make_shared<ImportArgs>();
  CLI::App* from_onnx = graph->add_subcommand(
      "from-onnx",
      "An ONNX model as a graph TOML: ONNX shape inference, CANN op types as ATC maps them");
  from_onnx->add_option("model", onnx->path, "the .onnx file (or protobuf text: .prototxt)")
      ->required();
  from_onnx->add_option("--batch-dim", onnx->batch_dim,
                        "the symbolic input dimension that becomes B (default: the one symbolic "
                        "leading dimension of the inputs)");
  from_onnx->add_option("--set-dim", onnx->set_dims,
                        "NAME=N: a size for a symbolic dimension (repeatable); fixing the batch "
                        "one gives a graph without B");
  from_onnx->add_option("-o,--output", onnx->output, "graph TOML to write ('-' for stdout)")
      ->required();
  from_onnx->callback([onnx] { run_from_onnx(*onnx); });

  auto ge = std::make_shared<ImportArgs>();
  CLI::App* from_ge = graph->add_subcommand(
      "from-ge", "A GE graph dump (ge_onnx_*_Build.pbtxt, DUMP_GE_GRAPH=1 or 2) as a graph TOML");
  from_ge->add_option("dump", ge->path, "the ge_onnx_*.pbtxt file")->required();
  from_ge->add_option("-o,--output", ge->output, "graph TOML to write ('-' for stdout)")
      ->required();
  from_ge->callback([ge] { run_from_ge(*ge); });

  auto example = std::make_shared<ImportArgs>();
  CLI::App* ex = graph->add_subcommand(
      "example-onnx", "Write a small example ONNX model (rec, cnn, attention, mlp) to try from-onnx");
  ex->add_option("name", example->path, "rec | cnn | attention | mlp")->required();
  ex->add_option("-o,--output", example->output, ".onnx file to write")->required();
  ex->callback([example] {
    write_output_file(example->output, frontend::example_onnx_model(example->path));
    std::cerr << fmt::format("wrote {}: example model '{}'\n", example->output, example->path);
  });
}

}  // namespace npusim::app
