#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace npusim::sim {

namespace {

// Doubles are rounded to 6 significant digits before serialisation: the JSON stays
// byte-identical for identical runs and readable, and no metric needs more precision.
double r6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double mag = std::pow(10.0, 5 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * mag) / mag;
}

nlohmann::ordered_json result_json(const SimResult& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["scenario"] = r.scenario;
  j["hw"] = r.hw;
  j["seed"] = r.seed;
  j["streams"] = r.streams;
  j["requests"] = r.requests;
  j["warmup_requests"] = r.warmup_requests;
  j["samples"] = r.samples;
  j["batches"] = r.batches;
  j["split_requests"] = r.split_requests;
  j["mean_batch_samples"] = r6(r.mean_batch_samples);
  j["mean_gear"] = r6(r.mean_gear);
  j["window_s"] = r6(r.window_s);
  j["window_completions"] = r.window_completions;
  j["qps"] = r6(r.qps);
  j["throughput"] = r6(r.throughput);
  j["latency_ms"] = ordered_json{{"mean", r6(r.latency.mean_ms)}, {"p50", r6(r.latency.p50_ms)},
                                 {"p90", r6(r.latency.p90_ms)},   {"p99", r6(r.latency.p99_ms)},
                                 {"p999", r6(r.latency.p999_ms)}, {"max", r6(r.latency.max_ms)}};
  j["queue_ms_mean"] = r6(r.queue_ms_mean);
  j["service_ms"] = ordered_json{{"mean", r6(r.service_ms_mean)},
                                 {"min", r6(r.service_ms_min)},
                                 {"max", r6(r.service_ms_max)}};
  j["in_system_mean"] = r6(r.in_system_mean);
  j["utilization"] = ordered_json{{"cube", r6(r.cube_utilization)},
                                  {"vector", r6(r.vector_utilization)},
                                  {"aicpu", r6(r.aicpu_utilization)},
                                  {"pcie", r6(r.pcie_utilization)},
                                  {"pcie_out", r6(r.pcie_out_utilization)},
                                  {"host", r6(r.host_utilization)},
                                  {"scheduler", r6(r.scheduler_utilization)}};
  j["hbm_gbps"] = r6(r.hbm_bytes_per_us / 1e3);
  j["device_idle_share"] = r6(r.device_idle_share);
  j["cards_needed"] = r.cards_needed ? ordered_json(*r.cards_needed) : ordered_json(nullptr);
  j["p99_met"] = r.p99_met ? ordered_json(*r.p99_met) : ordered_json(nullptr);
  ordered_json ops = ordered_json::array();
  for (const OpStats& o : r.ops) {
    ops.push_back(ordered_json{{"name", o.name},
                               {"type", o.type},
                               {"executions", o.executions},
                               {"mean_us", r6(o.mean_us)},
                               {"share", r6(o.share)},
                               {"source", o.source}});
  }
  j["ops"] = std::move(ops);
  const auto sources = [](const TimeSourceCounts& c) {
    return ordered_json{
        {"measured", c.measured}, {"anchored", c.anchored}, {"predicted", c.predicted}};
  };
  j["time_sources"] = ordered_json{{"ops", sources(r.op_sources)},
                                   {"executions", sources(r.execution_sources)}};
  j["events"] = r.events;
  j["warnings"] = r.warnings;
  return j;
}

// {low, high} of one figure over the two interval runs (the P10 run need not give the low value:
// a faster model raises QPS).
nlohmann::ordered_json low_high(double a, double b) {
  return nlohmann::ordered_json{{"low", r6(std::min(a, b))}, {"high", r6(std::max(a, b))}};
}

}  // namespace

std::string result_to_json(const SimResult& r) { return result_json(r).dump(2) + "\n"; }

std::string result_to_json(const SimResult& r, const std::optional<IntervalRuns>& interval) {
  using nlohmann::ordered_json;
  ordered_json j = result_json(r);
  if (!interval) {
    j["interval"] = nullptr;
    return j.dump(2) + "\n";
  }
  const SimResult& lo = interval->at_p10;
  const SimResult& hi = interval->at_p90;
  auto run = [](const SimResult& x) {
    return ordered_json{
        {"qps", r6(x.qps)}, {"p50_ms", r6(x.latency.p50_ms)}, {"p99_ms", r6(x.latency.p99_ms)}};
  };
  j["interval"] = ordered_json{{"source", interval->source},
                               {"qps", low_high(lo.qps, hi.qps)},
                               {"p50_ms", low_high(lo.latency.p50_ms, hi.latency.p50_ms)},
                               {"p99_ms", low_high(lo.latency.p99_ms, hi.latency.p99_ms)},
                               {"runs", ordered_json{{"p10", run(lo)}, {"p90", run(hi)}}}};
  return j.dump(2) + "\n";
}

std::string result_to_text(const SimResult& r, const std::optional<IntervalRuns>& interval) {
  std::string out = result_to_text(r);
  if (!interval) {
    out += "  P10-P90 of the model's error: uncalibrated (no prediction intervals on this chip)\n";
    return out;
  }
  const SimResult& lo = interval->at_p10;
  const SimResult& hi = interval->at_p90;
  out += fmt::format(
      "  P10-P90 of the model's error: QPS {:.6g}-{:.6g}  p50 {:.4g}-{:.4g} ms  p99 {:.4g}-{:.4g} "
      "ms  ({})\n",
      std::min(lo.qps, hi.qps), std::max(lo.qps, hi.qps),
      std::min(lo.latency.p50_ms, hi.latency.p50_ms),
      std::max(lo.latency.p50_ms, hi.latency.p50_ms),
      std::min(lo.latency.p99_ms, hi.latency.p99_ms),
      std::max(lo.latency.p99_ms, hi.latency.p99_ms), interval->source);
  return out;
}

std::string result_to_text(const SimResult& r) {
  std::string out;
  out += fmt::format("{} on {}: {} stream(s), seed {}\n", r.scenario, r.hw, r.streams, r.seed);
  out += fmt::format("  {} requests ({} samples, {} split) in {:.4g} s simulated\n", r.requests,
                     r.samples, r.split_requests, r.window_s);
  out += fmt::format(
      "  QPS {:.6g}   throughput {:.6g} samples/s   batch {:.3g} samples -> gear {:.3g}\n", r.qps,
      r.throughput, r.mean_batch_samples, r.mean_gear);
  out += fmt::format(
      "  latency ms: mean {:.4g}  p50 {:.4g}  p90 {:.4g}  p99 {:.4g}  p99.9 {:.4g}\n",
      r.latency.mean_ms, r.latency.p50_ms, r.latency.p90_ms, r.latency.p99_ms, r.latency.p999_ms);
  out += fmt::format("  queueing {:.4g} ms + service {:.4g} ms (mean)\n", r.queue_ms_mean,
                     r.service_ms_mean);
  out += fmt::format(
      "  utilisation: cube {:.1f}%  vector {:.1f}%  aicpu {:.1f}%  pcie {:.1f}%   "
      "device idle while serving {:.1f}%\n",
      100 * r.cube_utilization, 100 * r.vector_utilization, 100 * r.aicpu_utilization,
      100 * r.pcie_utilization, 100 * r.device_idle_share);
  if (r.cards_needed || r.p99_met) {
    out += "  target:";
    if (r.p99_met) out += fmt::format(" p99 {}", *r.p99_met ? "met" : "NOT met");
    if (r.cards_needed) out += fmt::format("  cards needed {}", *r.cards_needed);
    out += "\n";
  }
  out += fmt::format("  op times: {} measured, {} anchored, {} predicted (graph ops; executions "
                     "{} / {} / {})\n",
                     r.op_sources.measured, r.op_sources.anchored, r.op_sources.predicted,
                     r.execution_sources.measured, r.execution_sources.anchored,
                     r.execution_sources.predicted);
  std::vector<const OpStats*> top;
  for (const OpStats& o : r.ops) top.push_back(&o);
  std::stable_sort(top.begin(), top.end(),
                   [](const OpStats* a, const OpStats* b) { return a->share > b->share; });
  out += "  top ops by device time:";
  for (std::size_t i = 0; i < std::min<std::size_t>(3, top.size()); ++i) {
    out +=
        fmt::format("  {} {:.1f}% ({:.4g} us)", top[i]->name, 100 * top[i]->share, top[i]->mean_us);
  }
  out += "\n";
  return out;
}

std::string trace_to_json(const SimResult& r) {
  using nlohmann::ordered_json;
  ordered_json events = ordered_json::array();
  events.push_back(
      ordered_json{{"name", "process_name"},
                   {"ph", "M"},
                   {"pid", 1},
                   {"tid", 0},
                   {"args", {{"name", fmt::format("npusim {} on {}", r.scenario, r.hw)}}}});
  for (std::size_t t = 0; t < r.trace_tracks.size(); ++t) {
    events.push_back(ordered_json{{"name", "thread_name"},
                                  {"ph", "M"},
                                  {"pid", 1},
                                  {"tid", t},
                                  {"args", {{"name", r.trace_tracks[t]}}}});
    events.push_back(ordered_json{{"name", "thread_sort_index"},
                                  {"ph", "M"},
                                  {"pid", 1},
                                  {"tid", t},
                                  {"args", {{"sort_index", t}}}});
  }
  for (const TraceSpan& s : r.trace) {
    ordered_json e{{"name", r.trace_names[s.name]},
                   {"ph", "X"},
                   {"pid", 1},
                   {"tid", s.track},
                   // Chrome trace times are microseconds; ns precision survives as decimals
                   {"ts", static_cast<double>(s.start_ns) / 1e3},
                   {"dur", static_cast<double>(s.duration_ns) / 1e3}};
    if (s.batch >= 0) e["args"] = ordered_json{{"batch", s.batch}};
    events.push_back(std::move(e));
  }
  // Busy cores as counter tracks, beside the streams.
  for (const TraceCores& c : r.trace_cores) {
    const double ts = static_cast<double>(c.at_ns) / 1e3;
    events.push_back(ordered_json{{"name", "cube cores busy"},
                                  {"ph", "C"},
                                  {"pid", 1},
                                  {"ts", ts},
                                  {"args", {{"busy", c.cube_busy}}}});
    events.push_back(ordered_json{{"name", "vector cores busy"},
                                  {"ph", "C"},
                                  {"pid", 1},
                                  {"ts", ts},
                                  {"args", {{"busy", c.vector_busy}}}});
  }
  ordered_json doc{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  return doc.dump() + "\n";
}

}  // namespace npusim::sim
