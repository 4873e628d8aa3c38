// Rule idle_gaps: the device idle (no task of any kind running) for more than
// Thresholds::idle_share (10 %) of the step; gaps under Thresholds::idle_gap_min_us (10 us, launch
// jitter) are not listed. Each gap is named by the tasks on either side.
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_idle(Context& c) {
  if (!c.timeline) {
    c.skip("idle_gaps", "no start-time column: no timeline");
    return;
  }
  if (c.unordered) {
    c.skip("idle_gaps", "the rows are not in start-time order within a step");
    return;
  }
  double idle = 0, span = 0;
  for (const auto& s : c.report.steps) {
    idle += s.idle_us;
    span += s.span_us;
  }
  if (span <= 0 || idle / span <= c.th.idle_share) return;
  struct Gap {
    double us;
    std::uint32_t before, after;
    std::int64_t step;
  };
  std::vector<Gap> gaps;
  std::int64_t step = 0, covered_end = 0;
  std::uint32_t covered_by = kNone;
  for (std::uint32_t i : c.by_start) {
    const Task& t = c.tasks[i];
    if (covered_by == kNone || t.step != step) {
      step = t.step;
      covered_end = t.end_ns;
      covered_by = i;
      continue;
    }
    if (t.start_ns >= covered_end) {
      const double gap = us(t.start_ns - covered_end);
      if (gap >= c.th.idle_gap_min_us) gaps.push_back({gap, covered_by, i, t.step});
    }
    if (t.end_ns > covered_end) {
      covered_end = t.end_ns;
      covered_by = i;
    }
  }
  std::stable_sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.us > b.us; });
  Finding f;
  f.check = "idle_gaps";
  f.title = fmt::format("the device is idle {} of the step: host-bound stretches", pct(idle / span));
  f.time_us = idle;
  f.evidence = {{"idle_us", idle, ""}, {"span_us", span, ""}, {"idle_share", idle / span, ""}};
  for (const Gap& g : gaps) {
    if (f.ops.size() >= c.max_listed()) break;
    f.ops.push_back(c.str(c.tasks[g.after].name));
    f.evidence.push_back({c.str(c.tasks[g.after].name), std::nullopt,
                          fmt::format("idle {} before it (after {}{})", fmt_us(g.us),
                                      c.str(c.tasks[g.before].name),
                                      g.step >= 0 ? fmt::format(", step {}", g.step) : "")});
  }
  f.advice = {"Look at the host side of the gaps (the CANN / Python tracks of the timeline): "
              "data loading, synchronisation (.item(), .cpu()), Python overhead",
              "Reduce host work per step: graph mode, fused ops, asynchronous data loading"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
