#include "sim/whatif.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "model/error.h"
#include "sim/capacity.h"
#include "sim/card_sim.h"
#include "sim/sweep.h"

namespace npusim::sim {

namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> touched_ops(const std::vector<GraphChange>& changes) {
  std::vector<std::string> out;
  for (const GraphChange& c : changes) {
    for (const std::string& o : c.ops) {
      if (std::find(out.begin(), out.end(), o) == out.end()) out.push_back(o);
    }
  }
  return out;
}

// The row of pass `p`: alone on the graph when it applies there; otherwise after the passes of
// the full sequence that make it applicable (one of them when one suffices, else all before it).
std::optional<WhatifRow> pass_row(const Graph& g, const PassInfo& p, const PassOptions& opt,
                                  const std::vector<std::string>& applied_before) {
  WhatifRow row;
  row.name = p.name;
  PassResult alone = p.run(g, opt);
  if (!alone.changes.empty()) {
    row.graph = std::move(alone.graph);
    row.changes = std::move(alone.changes);
    row.ops = touched_ops(row.changes);
    return row;
  }
  std::optional<std::vector<std::string>> with;
  for (const std::string& q : applied_before) {
    const PassResult pre = find_pass(q).run(g, opt);
    if (!p.run(pre.graph, opt).changes.empty()) {
      with = std::vector<std::string>{q};
      break;
    }
  }
  if (!with) {
    const PassResult pre = apply_passes(g, applied_before, opt);
    if (applied_before.empty() || p.run(pre.graph, opt).changes.empty()) return std::nullopt;
    with = applied_before;
  }
  std::vector<std::string> names = *with;
  names.emplace_back(p.name);
  PassResult r = apply_passes(g, names, opt);
  row.with = *with;
  row.graph = std::move(r.graph);
  row.changes = std::move(r.changes);
  row.ops = touched_ops(row.changes);
  return row;
}

std::int64_t gear_for(const Deployment& d, double samples) {
  for (const std::int64_t g : d.gears) {
    if (static_cast<double>(g) >= samples) return g;
  }
  return d.gears.back();
}

// Largest gain first: QPS at the target, then latency, then the fixed pass order (stable sort).
bool ranks_before(const WhatifRow& a, const WhatifRow& b) {
  const double qa = a.qps_gain.value_or(0);
  const double qb = b.qps_gain.value_or(0);
  if (qa != qb) return qa > qb;
  return a.latency_gain > b.latency_gain;
}

Json row_json(const WhatifRow& r) {
  Json j;
  j["name"] = r.name;
  j["with"] = r.with;
  j["ops"] = r.ops;
  j["changes"] = Json::array();
  for (const GraphChange& c : r.changes) {
    j["changes"].push_back({{"pass", c.pass}, {"ops", c.ops}, {"what", c.what}, {"why", c.why}});
  }
  j["device_us_per_batch"] = r.device_us_per_batch;
  j["latency_ms"] = r.latency_ms;
  j["p50_ms"] = r.p50_ms;
  j["p99_ms"] = r.p99_ms;
  j["qps_at_target"] = r.qps_at_target ? Json(*r.qps_at_target) : Json(nullptr);
  j["latency_gain"] = r.latency_gain;
  j["qps_gain"] = r.qps_gain ? Json(*r.qps_gain) : Json(nullptr);
  j["simulations"] = r.simulations;
  return j;
}

std::string pct(double gain) { return fmt::format("{:+.1f}%", 100 * gain); }

}  // namespace

double graph_time_us(const Graph& graph, const HwSpec& hw, std::int64_t batch, CoreBudget budget) {
  double sum = 0;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (const auto& fixed = graph.ops()[i].duration_us) {
      sum += *fixed;
    } else {
      sum += predict(graph.instantiate(i, batch), hw, budget).duration_us;
    }
  }
  return sum;
}

WhatifResult run_whatif(const Scenario& scenario, const HwSpec& hw, const WhatifSpec& spec,
                        unsigned jobs) {
  std::vector<std::string> selected;
  if (spec.passes.empty()) {
    for (const PassInfo& p : graph_passes()) selected.emplace_back(p.name);
  } else {
    for (const std::string& n : spec.passes) (void)find_pass(n);
    for (const PassInfo& p : graph_passes()) {
      if (std::find(spec.passes.begin(), spec.passes.end(), p.name) != spec.passes.end()) {
        selected.emplace_back(p.name);
      }
    }
  }
  for (const std::string& op : spec.options.assume_fits) {
    if (!scenario.graph.find(op)) {
      throw InputError(kCommandLine, fmt::format("--assume-fits {}: the graph '{}' has no op of that name",
                                         op, scenario.graph.name()));
    }
  }
  check_max_qps_tolerance(spec.max_qps_tolerance);

  WhatifResult r;
  r.scenario = scenario.info.name;
  r.target_p99_ms = scenario.target.p99_ms;
  r.searched_qps = scenario.workload.arrival == ArrivalKind::kPoisson && scenario.target.p99_ms;
  const Deployment& d = scenario.deployment;
  r.reference_gear = gear_for(d, scenario.workload.batch_size.mean());
  const CoreBudget budget{
      d.cube_cores_per_stream > 0 ? d.cube_cores_per_stream : hw.chip.cube_cores,
      d.vector_cores_per_stream > 0 ? d.vector_cores_per_stream : hw.chip.vector_cores};

  // The passes themselves take microseconds; the simulations below dominate.
  const Graph& g = scenario.graph;
  r.baseline.name = "baseline";
  r.baseline.graph = g;
  std::vector<std::string> applied;
  PassResult chain{g, {}};
  for (const std::string& name : selected) {
    const PassInfo& p = find_pass(name);
    if (auto row = pass_row(g, p, spec.options, applied)) {
      r.passes.push_back(std::move(*row));
    } else {
      r.not_applicable.push_back(name);
    }
    PassResult next = p.run(chain.graph, spec.options);
    if (!next.changes.empty()) {
      applied.push_back(name);
      chain.graph = std::move(next.graph);
      for (GraphChange& c : next.changes) chain.changes.push_back(std::move(c));
    }
  }
  if (!chain.changes.empty()) {
    WhatifRow all;
    all.name = "all";
    all.with = applied;
    all.changes = std::move(chain.changes);
    all.ops = touched_ops(all.changes);
    all.graph = std::move(chain.graph);
    r.all = std::move(all);
  }

  // Every variant: its scenario checked up front (errors before any thread starts), then two
  // tasks each: one run at the scenario's load, one capacity search.
  const auto evaluate = [&](const std::vector<WhatifRow*>& rows) {
    std::vector<Scenario> variants;
    variants.reserve(rows.size());
    for (WhatifRow* row : rows) {
      Scenario sc = scenario;
      sc.graph = row->graph;
      check_scenario_fits(sc, hw);
      row->device_us_per_batch = graph_time_us(row->graph, hw, r.reference_gear, budget);
      variants.push_back(std::move(sc));
    }
    const std::size_t per = r.searched_qps ? 2 : 1;
    std::vector<SimResult> at_load(rows.size());
    std::vector<MaxQps> capacity(rows.size());
    run_parallel(rows.size() * per, jobs, [&](std::size_t t) {
      const std::size_t v = t / per;
      SimOptions opt;
      opt.measured_hw = spec.measured_hw;
      if (t % per == 0) {
        at_load[v] = simulate(variants[v], hw, opt);
      } else {
        capacity[v] = find_max_qps(variants[v], hw, spec.max_qps_tolerance, opt);
      }
    });
    for (std::size_t v = 0; v < rows.size(); ++v) {
      WhatifRow& row = *rows[v];
      row.latency_ms = at_load[v].latency.mean_ms;
      row.p50_ms = at_load[v].latency.p50_ms;
      row.p99_ms = at_load[v].latency.p99_ms;
      row.simulations = 1;
      if (r.searched_qps) {
        row.qps_at_target = capacity[v].rate_qps;
        row.simulations += capacity[v].simulations;
      }
    }
  };
  const auto set_gains = [&](WhatifRow& row) {
    if (r.baseline.latency_ms > 0) row.latency_gain = 1 - row.latency_ms / r.baseline.latency_ms;
    if (row.qps_at_target && r.baseline.qps_at_target && *r.baseline.qps_at_target > 0) {
      row.qps_gain = *row.qps_at_target / *r.baseline.qps_at_target - 1;
    }
  };
  std::vector<WhatifRow*> rows{&r.baseline};
  for (WhatifRow& row : r.passes) rows.push_back(&row);
  if (r.all) rows.push_back(&*r.all);
  evaluate(rows);
  for (WhatifRow* row : rows) set_gains(*row);
  std::stable_sort(r.passes.begin(), r.passes.end(), ranks_before);

  if (spec.waterfall && r.all) {
    // Step k: the k best-ranked passes, applied as `all` applies them. The first step is the
    // first pass's own row (alone, or after the passes it needs, as applying it alone would
    // leave the graph unchanged) and the last is `all`: only the steps between are new variants.
    std::vector<std::string> prefix;
    std::vector<WhatifRow*> fresh;
    r.waterfall.reserve(r.passes.size());
    for (std::size_t k = 0; k < r.passes.size(); ++k) {
      prefix.push_back(r.passes[k].name);
      WhatifRow step;
      if (k == 0) {
        step = r.passes[0];
        step.with.push_back(step.name);
      } else if (k + 1 == r.passes.size()) {
        step = *r.all;
      } else {
        PassResult pr = apply_passes(g, prefix, spec.options);
        step.graph = std::move(pr.graph);
        step.changes = std::move(pr.changes);
        step.ops = touched_ops(step.changes);
        for (const std::string& name : selected) {
          if (std::find(prefix.begin(), prefix.end(), name) == prefix.end()) continue;
          for (const GraphChange& c : step.changes) {
            if (c.pass == name) {
              step.with.push_back(name);
              break;
            }
          }
        }
      }
      step.name = r.passes[k].name;
      r.waterfall.push_back(std::move(step));
    }
    for (std::size_t k = 1; k + 1 < r.waterfall.size(); ++k) fresh.push_back(&r.waterfall[k]);
    evaluate(fresh);
    for (WhatifRow* row : fresh) set_gains(*row);
  }
  return r;
}

std::string whatif_to_json(const WhatifResult& r) {
  Json j;
  j["scenario"] = r.scenario;
  j["reference_gear"] = r.reference_gear;
  j["target_p99_ms"] = r.target_p99_ms ? Json(*r.target_p99_ms) : Json(nullptr);
  j["baseline"] = row_json(r.baseline);
  j["passes"] = Json::array();
  for (const WhatifRow& row : r.passes) j["passes"].push_back(row_json(row));
  j["all"] = r.all ? row_json(*r.all) : Json(nullptr);
  j["not_applicable"] = r.not_applicable;
  j["waterfall"] = Json::array();
  for (const WhatifRow& row : r.waterfall) j["waterfall"].push_back(row_json(row));
  return j.dump(1) + "\n";
}

std::string whatif_to_text(const WhatifResult& r) {
  std::string out =
      fmt::format("whatif {}: graph rewrites, each alone and all together\n", r.scenario);
  if (r.passes.empty()) {
    out += "no pass applies to this graph";
    if (!r.not_applicable.empty()) {
      out += " (tried: ";
      for (std::size_t i = 0; i < r.not_applicable.size(); ++i) {
        out += (i ? ", " : "") + r.not_applicable[i];
      }
      out += ")";
    }
    return out + "\n";
  }
  out += fmt::format(
      "latency at the scenario's load (mean, P99); QPS at target = highest Poisson rate with P99 "
      "<= {}; device us = sum of predicted op times of one batch at gear {}\n\n",
      r.target_p99_ms ? fmt::format("{} ms", *r.target_p99_ms) : std::string("- (no target)"),
      r.reference_gear);
  out += fmt::format("{:<44}{:>11}{:>10}{:>10}{:>10}{:>13}{:>10}\n", "variant", "device us",
                     "mean ms", "P99 ms", "mean gain", "QPS@target", "QPS gain");
  const auto line = [&](const WhatifRow& row, bool base) {
    std::string name = row.name;
    if (!row.with.empty() && row.name != "all") {
      name += " (after ";
      for (std::size_t i = 0; i < row.with.size(); ++i) name += (i ? ", " : "") + row.with[i];
      name += ")";
    }
    const std::string qps =
        row.qps_at_target ? fmt::format("{:.0f}", *row.qps_at_target) : std::string("-");
    const std::string qgain = base || !row.qps_gain ? std::string("") : pct(*row.qps_gain);
    out += fmt::format("{:<44}{:>11.1f}{:>10.3f}{:>10.3f}{:>10}{:>13}{:>10}\n", name,
                       row.device_us_per_batch, row.latency_ms, row.p99_ms,
                       base ? std::string("") : pct(row.latency_gain), qps, qgain);
  };
  line(r.baseline, true);
  for (const WhatifRow& row : r.passes) line(row, false);
  if (r.all) line(*r.all, false);
  out += "\nchanges\n";
  std::set<std::string> shown;
  const std::vector<GraphChange>& all = r.all ? r.all->changes : r.passes.front().changes;
  for (const WhatifRow& row : r.passes) {
    for (const GraphChange& c : row.changes) {
      const std::string key = c.pass + "\x1f" + c.what;
      if (!shown.insert(key).second) continue;
      out += fmt::format("  {}: {}\n    why: {}\n", c.pass, c.what, c.why);
    }
  }
  for (const GraphChange& c : all) {
    const std::string key = c.pass + "\x1f" + c.what;
    if (!shown.insert(key).second) continue;
    out += fmt::format("  {} (in 'all'): {}\n    why: {}\n", c.pass, c.what, c.why);
  }
  if (!r.waterfall.empty()) {
    out += "\nwaterfall: the best-ranked passes applied cumulatively\n";
    for (const WhatifRow& row : r.waterfall) {
      const std::string qps =
          row.qps_at_target ? fmt::format("{:.0f}", *row.qps_at_target) : std::string("-");
      out += fmt::format("{:<44}{:>11.1f}{:>10.3f}{:>10.3f}{:>10}{:>13}{:>10}\n", "+ " + row.name,
                         row.device_us_per_batch, row.latency_ms, row.p99_ms,
                         pct(row.latency_gain), qps, row.qps_gain ? pct(*row.qps_gain) : "");
    }
  }
  if (!r.not_applicable.empty()) {
    out += "\nnot applicable: ";
    for (std::size_t i = 0; i < r.not_applicable.size(); ++i) {
      out += (i ? ", " : "") + r.not_applicable[i];
    }
    out += "\n";
  }
  return out;
}

}  // namespace npusim::sim
