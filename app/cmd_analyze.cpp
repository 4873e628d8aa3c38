// npusim analyze: read a profile (file, PROF_* / *_ascend_pt folder, or a folder of several) and
// print what a performance engineer would find by hand, ranked by the time at stake; with
// --estimate SCENARIO, each finding that maps to a graph pass or a deployment setting carries its
// predicted gain on that scenario (npusim whatif, a streams sweep) and findings rank by it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/common.h"
#include "model/error.h"
#include "profile/advisor.h"
#include "profile/discover.h"
#include "sim/scenario.h"
#include "sim/sweep.h"
#include "sim/whatif.h"

namespace npusim::app {

namespace {

struct AnalyzeArgs {
  std::string path;
  std::string hw;
  std::vector<std::string> overlays;
  bool json = false;
  std::string md;
  std::string estimate;           // scenario to estimate gains on
  std::vector<std::string> sets;  // overrides of that scenario
  unsigned jobs = 0;
  bool strict = false;
};

// ---- --estimate -------------------------------------------------------------------------------

// The largest stream count the setting search tries; points whose core partitions exceed the
// chip are skipped by the sweep, so this only bounds the work.
constexpr int kMaxStreamsTried = 8;

// A finding's predicted gain on the scenario.
struct Estimate {
  std::string via;                     // the pass (with its enablers) or the setting
  std::string kind;                    // "pass" | "setting"
  std::vector<std::string> ops;        // scenario ops the pass rewrites
  std::optional<double> latency_gain;  // 1 - latency / baseline (passes: at the scenario's load)
  std::optional<double> qps_gain;      // QPS at the P99 target / baseline - 1
  std::optional<double> qps_at_target;
};

// The `cause` evidence of a task_wait finding ("" when absent).
std::string cause(const profile::Finding& f) {
  for (const profile::Evidence& e : f.evidence) {
    if (e.key == "cause") return e.text;
  }
  return "";
}

// Which passes a finding maps to: by its check, and by the op types / names it lists when a pass
// rewrites ops of those types in the scenario.
std::vector<std::string> passes_for(const profile::Finding& f, const sim::WhatifResult& w,
                                    const sim::Scenario& sc) {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (f.check == "aicpu") {
    add("aicpu_to_host");
    add("fuse_masked_gather");
    for (const std::string& a : f.advice) {
      if (a.find("INT64") != std::string::npos) add("int64_narrow");
    }
  } else if (f.check == "cube_utilization") {
    add("fold_bmm_batch");
  } else if (f.check == "task_wait") {
    // The wait's cause: after a dynamic-shape op the shape round trip goes with the op; after an
    // AI CPU op, the AI CPU hand-back.
    const std::string c = cause(f);
    if (c == "after_dynamic_shape") add("fuse_masked_gather");
    if (c == "after_aicpu") {
      add("aicpu_to_host");
      add("fuse_masked_gather");
    }
  } else if (f.check == "memory_bound") {
    add("drop_redundant_tile");
    add("tile_concat");
    add("topk_valid_length");
  }
  if (f.check == "op_type_share" || f.check == "long_ops" || f.check == "max_over_mean" ||
      f.check == "memory_bound") {
    for (const sim::WhatifRow& row : w.passes) {
      for (const std::string& op : row.ops) {
        const auto i = sc.graph.find(op);
        if (!i) continue;
        const std::string& type = sc.graph.ops()[*i].text.type;
        if (std::find(f.ops.begin(), f.ops.end(), type) != f.ops.end() ||
            std::find(f.ops.begin(), f.ops.end(), op) != f.ops.end()) {
          add(row.name);
        }
      }
    }
  }
  return out;
}

// The deployment setting a finding maps to.
enum class Setting { kNone, kStreams, kCoreLimit };

Setting setting_for(const profile::Finding& f) {
  // Host-bound stretches and stalls: more instances per card overlap one's host work with
  // another's device work. A recompilation stall is fixed by the API, and a wait on a
  // collective by overlapping communication, not by instances.
  if (f.check == "idle_gaps" || (f.check == "task_wait" && cause(f) != "recompilation" &&
                                 cause(f) != "communication")) {
    return Setting::kStreams;
  }
  // Calls of one kernel far slower than their mean: contention with what runs beside it, which
  // a core limit (a partition of the cube cores per stream) takes away.
  if (f.check == "max_over_mean") return Setting::kCoreLimit;
  return Setting::kNone;
}

// The best point of a one-axis sweep with the max-QPS search, as an estimate.
std::optional<Estimate> best_setting(const std::filesystem::path& file, const AnalyzeArgs& a,
                                     const std::string& axis) {
  sim::SweepSpec spec;
  spec.scenario_file = file;
  spec.sets = a.sets;
  spec.axes.push_back(sim::parse_sweep_axis(axis));
  spec.find_max_qps = true;
  spec.hw_dirs = hw_spec_dirs();
  const sim::SweepResult sw = sim::run_sweep(spec, a.jobs);
  const sim::SweepPoint* best = nullptr;
  for (const sim::SweepPoint& p : sw.points) {
    if (p.feasible && p.max_qps && (!best || *p.max_qps > *best->max_qps)) best = &p;
  }
  if (!best || !sw.baseline.max_qps || *sw.baseline.max_qps <= 0) return std::nullopt;
  Estimate s;
  s.kind = "setting";
  if (*best->max_qps > *sw.baseline.max_qps) {
    s.via = fmt::format("{}={}", sw.axes.front().key, best->values.front());
    s.qps_at_target = best->max_qps;
    s.qps_gain = *best->max_qps / *sw.baseline.max_qps - 1;
  } else {
    s.via = fmt::format("{} as the scenario has it (no value tried does better)", sw.axes.front().key);
    s.qps_at_target = sw.baseline.max_qps;
    s.qps_gain = 0.0;
  }
  return s;
}

bool better(const Estimate& a, const Estimate& b) {
  const double qa = a.qps_gain.value_or(-1e300);
  const double qb = b.qps_gain.value_or(-1e300);
  if (qa != qb) return qa > qb;
  return a.latency_gain.value_or(-1e300) > b.latency_gain.value_or(-1e300);
}

std::string pct(const std::optional<double>& g) {
  return g ? fmt::format("{:+.1f} %", 100 * *g) : std::string("-");
}

// The estimates of every finding of every report, and the scenario's figures.
struct Estimates {
  std::string scenario;
  std::optional<double> target_p99_ms;
  std::optional<double> baseline_qps;
  double baseline_latency_ms = 0;
  // per report, per finding
  std::vector<std::vector<std::optional<Estimate>>> of;
};

Estimates estimate_findings(const std::vector<profile::Report>& reports, const AnalyzeArgs& a) {
  const std::filesystem::path file = resolve_scenario(a.estimate);
  const sim::Scenario sc = sim::load_scenario(file, a.sets);
  const HwSpec hw = sim::load_scenario_hw(sc, hw_spec_dirs());
  const sim::WhatifResult w = sim::run_whatif(sc, hw, sim::WhatifSpec{}, a.jobs);
  Estimates e;
  e.scenario = w.scenario;
  e.target_p99_ms = w.target_p99_ms;
  e.baseline_qps = w.baseline.qps_at_target;
  e.baseline_latency_ms = w.baseline.latency_ms;

  bool want_streams = false;
  bool want_core_limit = false;
  for (const auto& r : reports) {
    for (const auto& f : r.findings) {
      want_streams = want_streams || setting_for(f) == Setting::kStreams;
      want_core_limit = want_core_limit || setting_for(f) == Setting::kCoreLimit;
    }
  }
  std::optional<Estimate> streams;
  std::optional<Estimate> core_limit;
  if (want_streams && w.searched_qps) {
    streams = best_setting(file, a, fmt::format("deployment.streams=1..{}", kMaxStreamsTried));
  }
  if (want_core_limit && w.searched_qps) {
    // Every core limit up to an even split of the cube cores among the streams (a limit of 0,
    // no partition, is the key left out, which a sweep value cannot say).
    const int most = std::max(1, hw.chip.cube_cores / std::max(1, sc.deployment.streams));
    core_limit = best_setting(file, a, fmt::format("deployment.cube_cores_per_stream=1..{}", most));
  }

  for (const auto& r : reports) {
    std::vector<std::optional<Estimate>> row;
    for (const auto& f : r.findings) {
      std::optional<Estimate> best;
      for (const std::string& p : passes_for(f, w, sc)) {
        for (const sim::WhatifRow& pr : w.passes) {
          if (pr.name != p) continue;
          Estimate est;
          est.kind = "pass";
          est.via = pr.name;
          for (const std::string& x : pr.with) est.via += " (after " + x + ")";
          est.ops = pr.ops;
          est.latency_gain = pr.latency_gain;
          est.qps_gain = pr.qps_gain;
          est.qps_at_target = pr.qps_at_target;
          if (!best || better(est, *best)) best = est;
        }
      }
      const Setting st = setting_for(f);
      const std::optional<Estimate>& setting =
          st == Setting::kStreams ? streams
                                  : (st == Setting::kCoreLimit ? core_limit : std::nullopt);
      if (setting && (!best || better(*setting, *best))) best = setting;
      row.push_back(best);
    }
    e.of.push_back(std::move(row));
  }
  return e;
}

// Findings of all reports, those with an estimate first by gain, then the rest by time at stake.
std::vector<std::pair<std::size_t, std::size_t>> ranking(
    const std::vector<profile::Report>& reports, const Estimates& e) {
  std::vector<std::pair<std::size_t, std::size_t>> order;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    for (std::size_t f = 0; f < reports[r].findings.size(); ++f) order.emplace_back(r, f);
  }
  std::stable_sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
    const auto& ex = e.of[x.first][x.second];
    const auto& ey = e.of[y.first][y.second];
    if (ex.has_value() != ey.has_value()) return ex.has_value();
    if (ex && ey) return better(*ex, *ey);
    return reports[x.first].findings[x.second].time_us >
           reports[y.first].findings[y.second].time_us;
  });
  return order;
}

std::string estimate_line(const std::optional<Estimate>& est) {
  if (!est) return "no estimate";
  std::string s = fmt::format("{} {}: QPS at target {}", est->kind, est->via, pct(est->qps_gain));
  if (est->latency_gain) s += fmt::format(", latency {}", pct(est->latency_gain));
  if (!est->ops.empty()) {
    s += " (ops";
    for (const std::string& o : est->ops) s += " " + o;
    s += ")";
  }
  return s;
}

std::string estimates_text(const std::vector<profile::Report>& reports, const Estimates& e,
                           bool markdown) {
  std::string out =
      markdown ? fmt::format("\n## Findings ranked by predicted gain on {}\n\n", e.scenario)
               : fmt::format("\n== findings ranked by predicted gain on {}\n", e.scenario);
  out += fmt::format(
      "{}gain = QPS at the P99 target ({}) against the scenario as it is ({} QPS), then mean "
      "latency at its load ({:.3f} ms); passes from npusim whatif, settings from a sweep\n{}",
      markdown ? "" : "   ",
      e.target_p99_ms ? fmt::format("{} ms", *e.target_p99_ms) : std::string("no target"),
      e.baseline_qps ? fmt::format("{:.0f}", *e.baseline_qps) : std::string("-"),
      e.baseline_latency_ms, markdown ? "\n" : "");
  std::size_t n = 0;
  for (const auto& [r, f] : ranking(reports, e)) {
    const profile::Finding& fi = reports[r].findings[f];
    const std::string at_stake = fmt::format("{:.2f} us at stake", fi.time_us);
    if (markdown) {
      out += fmt::format("{}. **[{}] {}** ({}) — {}\n", ++n, fi.severity, fi.title, at_stake,
                         estimate_line(e.of[r][f]));
    } else {
      out += fmt::format("  {}. [{}] {} ({})\n       {}\n", ++n, fi.severity, fi.title, at_stake,
                         estimate_line(e.of[r][f]));
    }
  }
  return out;
}

nlohmann::json estimate_json(const std::optional<Estimate>& est) {
  if (!est) return nullptr;
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"kind", est->kind},
          {"via", est->via},
          {"ops", est->ops},
          {"latency_gain", opt(est->latency_gain)},
          {"qps_gain", opt(est->qps_gain)},
          {"qps_at_target", opt(est->qps_at_target)}};
}

// The advisor's JSON with an `estimate` on each finding, findings reordered by the ranking, and
// an `estimate_basis` object (docs/whatif.md).
std::string estimates_json(const std::vector<profile::Report>& reports, const Estimates& e) {
  nlohmann::json root = nlohmann::json::parse(profile::render_json(reports));
  std::map<std::string, std::vector<nlohmann::json>> by_key;
  for (auto& f : root["findings"]) {
    const std::string key = f["profile"].get<std::string>() + "\x1f" +
                            f["check"].get<std::string>() + "\x1f" + f["title"].get<std::string>();
    by_key[key].push_back(f);
  }
  nlohmann::json ranked = nlohmann::json::array();
  for (const auto& [r, fi] : ranking(reports, e)) {
    const profile::Finding& f = reports[r].findings[fi];
    const std::string key = reports[r].profile + "\x1f" + f.check + "\x1f" + f.title;
    auto& list = by_key[key];
    NPUSIM_CHECK(!list.empty());
    nlohmann::json j = list.front();
    list.erase(list.begin());
    j["estimate"] = estimate_json(e.of[r][fi]);
    ranked.push_back(std::move(j));
  }
  root["findings"] = ranked;
  root["estimate_basis"] = {
      {"scenario", e.scenario},
      {"target_p99_ms",
       e.target_p99_ms ? nlohmann::json(*e.target_p99_ms) : nlohmann::json(nullptr)},
      {"baseline_qps_at_target",
       e.baseline_qps ? nlohmann::json(*e.baseline_qps) : nlohmann::json(nullptr)},
      {"baseline_latency_ms", e.baseline_latency_ms}};
  return root.dump(1) + "\n";
}

// The chip whose bandwidths are used when the user names none (cores and clock are inferred
// from the profile's cycle columns when it has them).
constexpr const char* kDefaultChip = "ascend910b3";

void run_analyze(const AnalyzeArgs& a) {
  const profile::Discovery found = profile::discover_profiles(a.path, profile::ReadOptions{a.strict});
  profile::AnalyzeOptions opt;
  if (!a.hw.empty()) {
    opt.chip = profile::chip_figures(load_hw(a.hw, a.overlays), "--hw " + a.hw);
    opt.chip_given = true;
  } else {
    try {
      opt.chip = profile::chip_figures(load_hw(kDefaultChip, a.overlays),
                                       std::string(kDefaultChip) + " (default; pass --hw)");
    } catch (const InputError& e) {
      warn(fmt::format("default chip {} not loaded ({}); bandwidth checks are skipped",
                       kDefaultChip, e.what()));
    }
  }
  // The bundled chips: when --hw is not given, the one matching the profile's measured cores
  // and clock gives the bandwidths ("% of HBM") and the vector core count.
  if (a.hw.empty()) {
    for (const auto& file : list_hw_specs(hw_spec_dirs())) {
      try {
        opt.known_chips.push_back(
            profile::chip_figures(load_hw(file.string(), a.overlays), file.stem().string()));
      } catch (const InputError& e) {
        warn(fmt::format("chip spec {} not loaded for matching ({})", file.string(), e.what()));
      }
    }
  }
  std::vector<profile::Report> reports;
  for (const auto& src : found.profiles) {
    reports.push_back(profile::analyze(src, opt));
  }
  for (const auto& n : found.notes) reports.front().notes.push_back(n);

  std::optional<Estimates> est;
  if (!a.estimate.empty()) est = estimate_findings(reports, a);

  // Render everything before writing anything, so a failure leaves no partial output.
  std::string md = a.md.empty() ? std::string() : profile::render_markdown(reports);
  if (est && !a.md.empty()) md += estimates_text(reports, *est, true);
  if (a.json) {
    std::cout << (est ? estimates_json(reports, *est) : profile::render_json(reports));
  } else {
    std::cerr << fmt::format("read {} profile(s) under {}\n", reports.size(), a.path);
    for (const auto& n : found.notes) std::cerr << "note: " << n << '\n';
    std::cout << profile::render_text(reports);
    if (est) std::cout << estimates_text(reports, *est, false);
  }
  if (!a.md.empty()) write_output_file(a.md, md);
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Read an msprof / torch_npu profile and report what to fix, ranked by time at stake");
  cmd->add_option("path", args->path,
                  "op_summary_*.csv / kernel_details.csv / a profiler .db / a timeline JSON, a "
                  "PROF_* or *_ascend_pt folder, or a folder holding several")
      ->required();
  cmd->add_option("--hw", args->hw,
                  "chip for cube cores, clock and bandwidths (default: cores and clock inferred "
                  "from the profile, bandwidths of ascend910b3)");
  cmd->add_option("--hw-overlay", args->overlays, "TOML overlay(s) on the chip spec");
  cmd->add_flag("--json", args->json, "complete JSON on stdout instead of the summary");
  cmd->add_option("--md", args->md, "also write a Markdown report to FILE");
  cmd->add_flag("--strict", args->strict, "fail at the first malformed or truncated row of a profile file instead of skipping and counting it");
  cmd->add_option("--estimate", args->estimate,
                  "SCENARIO: predict on this scenario (file or bundled name) what each finding's "
                  "remedy buys (graph passes, stream count) and rank findings by it");
  cmd->add_option("--set", args->sets,
                  "override a value of the --estimate scenario: section.key=value (repeatable)");
  cmd->add_option("--jobs,-j", args->jobs, "threads for --estimate (0 = all local cores)")
      ->capture_default_str();
  cmd->callback([args] { run_analyze(*args); });
}

}  // namespace npusim::app
