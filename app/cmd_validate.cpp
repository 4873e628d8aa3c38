// `npusim validate FILE...`: decide what each file is, load it with the loader of that kind and
// say so; stop at the first defect with its file:line:col diagnostic (exit 2 from main()).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/common.h"
#include "model/error.h"
#include "model/graph.h"
#include "model/hw_overlay.h"
#include "model/hw_spec.h"
#include "model/toml_reader.h"
#include "sim/card_sim.h"
#include "sim/scenario.h"

namespace npusim::app {

namespace {

namespace fs = std::filesystem;

bool is_hw_spec(const toml::table& root) { return root.contains("chip"); }

bool is_hw_overlay(const toml::table& root) {
  if (root.empty() || root.contains("chip")) return false;
  const auto& allowed = hw_overlay_sections();
  for (auto&& [key, value] : root) {
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end()) return false;
  }
  return true;
}

std::string validate_hw_spec(const fs::path& file) {
  const HwSpec s = load_hw_spec(file);
  return fmt::format("hw spec {}", s.chip.name);
}

std::string validate_hw_overlay(const fs::path& file) {
  const std::vector<std::string> keys = check_hw_overlay(file);
  std::string list;
  for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
  return keys.empty() ? std::string("hw overlay, sets no values")
                      : fmt::format("hw overlay, sets {}", list);
}

/// One kind of input file: how to recognise it from its top-level tables and how to load it
/// (the loader throws InputError; it returns what the "ok" line says about the file).
struct FileKind {
  bool (*matches)(const toml::table& root);
  std::string (*validate)(const fs::path& file);
};

// Checked in order; the first match decides. A new kind of input file adds one line here.
const FileKind kFileKinds[] = {
    {is_hw_spec, validate_hw_spec},
    {is_hw_overlay, validate_hw_overlay},
    {[](const toml::table& r) { return r.contains("scenario"); },
     [](const fs::path& f) { return sim::check_scenario_file(f, hw_spec_dirs()); }},
    {[](const toml::table& r) { return r.contains("graph"); },
     [](const fs::path& f) { return check_graph_file(f); }},
};

// The graph a graph file or a scenario holds, shapes of every op (validate --shapes).
std::string shapes_of_file(const fs::path& file) {
  const TomlFile doc = parse_toml_file(file);
  if (doc.root.contains("scenario")) {
    return describe_shapes(sim::load_scenario(file).graph);
  }
  if (doc.root.contains("graph")) return describe_shapes(load_graph_file(file));
  return "";
}

std::string validate_file(const fs::path& file) {
  const TomlFile doc = parse_toml_file(file);
  if (doc.root.empty()) {
    // An empty file is no kind at all; the hw loader words it the same way.
    return validate_hw_spec(file);
  }
  for (const FileKind& kind : kFileKinds) {
    if (kind.matches(doc.root)) return kind.validate(file);
  }
  throw InputError({doc.file, 0, 0},
                   "unknown file kind, expected a hw spec ([chip]), an overlay (only hw sections "
                   "and [meta]), a scenario ([scenario]) or a graph ([graph])");
}

}  // namespace

void register_validate(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto shapes = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check input files (hw specs, overlays): print 'ok: FILE (kind)' for each, or the first "
      "defect as file:line:col and exit 2");
  cmd->add_option("files", *files, "files to check, in order")->required();
  cmd->add_flag("--shapes", *shapes,
                "for a graph or a scenario, also print every op's inputs (where each comes from) "
                "and outputs, and whether they were declared, inferred or an upper bound");
  cmd->callback([files, shapes] {
    for (const std::string& f : *files) {
      const std::string what = validate_file(f);
      std::cout << fmt::format("ok: {} ({})\n", f, what) << std::flush;
      if (*shapes) std::cout << shapes_of_file(f) << std::flush;
    }
  });
}

}  // namespace npusim::app
