// The step breakdown and rule exposed_communication. Per step, as msprof-analyze's
// step_trace_time.csv defines it: computing = union of the intervals of every device task that
// is not communication (kernels, and runtime tasks such as DSA_SQE: the profiler counts them); communication =
// union of communication task intervals; exposed ("not overlapped") = communication not covered
// by computing; overlapped = the rest; free = span - computing - exposed. The finding fires when
// exposed communication is kExposedShare of the span or more, and names the collectives whose
// exposed time is largest, with their wait / transit split from communication.json.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

/// Exposed communication worth a finding: a tenth of the step (estimate: the same bar as
/// Thresholds::idle_share for idle time, the other time the compute units sit out).
constexpr double kExposedShare = 0.10;

}  // namespace

void compute_step_breakdown(Context& c) {
  if (!c.timeline || c.communication.empty()) return;
  std::map<std::int64_t, std::vector<Interval>> compute, comm;
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    const Task& t = c.tasks[i];
    if (t.kind == TaskKind::kCommunication) {
      comm[t.step].push_back({t.start_ns, t.end_ns, i});
    } else {
      compute[t.step].push_back({t.start_ns, t.end_ns, i});
    }
  }
  for (auto& s : c.report.steps) {
    const auto it = comm.find(s.step);
    if (it == comm.end()) continue;
    const std::vector<Interval> cm = merged(compute[s.step]);
    const std::vector<Interval> comm_m = merged(it->second);
    std::int64_t computing = 0, communication = 0, overlapped = 0;
    for (const auto& i : cm) computing += i.end - i.start;
    for (const auto& i : comm_m) {
      communication += i.end - i.start;
      overlapped += covered_ns(cm, i.start, i.end);
    }
    s.has_communication = true;
    s.computing_us = us(computing);
    s.communication_us = us(communication);
    s.overlapped_communication_us = us(overlapped);
    s.exposed_communication_us = us(communication - overlapped);
    s.free_us = std::max(0.0, s.span_us - s.computing_us - s.exposed_communication_us);
  }
}

void check_exposed_communication(Context& c) {
  if (c.communication.empty()) return;
  if (!c.timeline) {
    c.skip("exposed_communication", "no start-time column: no timeline");
    return;
  }
  double exposed = 0, span = 0, comm = 0, overlapped = 0;
  for (const auto& s : c.report.steps) {
    if (!s.has_communication) continue;
    exposed += s.exposed_communication_us;
    comm += s.communication_us;
    overlapped += s.overlapped_communication_us;
  }
  for (const auto& s : c.report.steps) span += s.span_us;
  if (span <= 0 || exposed < kExposedShare * span) return;

  // Each collective's own exposed time: its interval less what compute covers.
  std::vector<Interval> compute;
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    if (c.tasks[i].kind != TaskKind::kCommunication) {
      compute.push_back({c.tasks[i].start_ns, c.tasks[i].end_ns, i});
    }
  }
  const std::vector<Interval> cm = merged(compute);
  std::vector<std::pair<double, std::uint32_t>> ranked;
  for (const Interval& i : c.communication) {
    ranked.emplace_back(us(i.end - i.start - covered_ns(cm, i.start, i.end)), i.task);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  Finding f;
  f.check = "exposed_communication";
  f.title = fmt::format("communication no compute overlaps takes {} of the step ({})",
                        pct(exposed / span), fmt_us(exposed));
  f.time_us = exposed;
  f.evidence = {{"exposed_us", exposed, ""},
                {"overlapped_us", overlapped, ""},
                {"communication_us", comm, ""},
                {"span_us", span, ""},
                {"exposed_share", exposed / span, ""}};
  for (const auto& [t_us, task] : ranked) {
    if (f.ops.size() >= c.max_listed() || t_us <= 0) break;
    const Task& t = c.tasks[task];
    const std::string& name = c.str(t.name);
    std::string split;
    for (const auto& rec : c.collectives) {
      if (rec.name != name) continue;
      split = fmt::format("; communication.json: wait {}, synchronisation {}, transit {}, "
                          "idle {}",
                          fmt_us(rec.wait_ms * 1e3), fmt_us(rec.synchronization_ms * 1e3),
                          fmt_us(rec.transit_ms * 1e3), fmt_us(rec.idle_ms * 1e3));
      break;
    }
    f.ops.push_back(name);
    f.evidence.push_back({name, std::nullopt,
                          fmt::format("{} exposed of {} (line {}){}", fmt_us(t_us),
                                      fmt_us(t.duration_us), t.line, split)});
  }
  f.advice = {"Overlap communication with compute: bucketed gradient all-reduce during the "
              "backward pass, communication on its own stream, prefetching the next layer's "
              "all-gather; gradient accumulation sends fewer, larger collectives",
              "A collective whose time is mostly wait / synchronisation waits for a slower "
              "rank: compare the ranks' step times before tuning the collective itself",
              "A collective whose time is mostly transit moves too much or too slowly: check its "
              "size, the link (HCCS / RDMA) bandwidth it reached, and the parallel layout"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
