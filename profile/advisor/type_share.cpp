// Rule op_type_share: an op type whose share of compute time is out of proportion. Threshold:
// Thresholds::type_share (40 %, the field's classic warning sign for one type).
#include <fmt/format.h>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_type_share(Context& c) {
  const Report& r = c.report;
  if (c.untyped > 0 && c.untyped == r.ops) {
    c.skip("op_type_share", "no op types in the profile (profiler Level0 writes N/A): ops are "
                            "grouped by name");
    return;
  }
  // With a single op type (a one-kernel run) a share says nothing.
  if (r.op_types.size() < 2) return;
  for (const auto& t : r.op_types) {
    if (t.share <= c.th.type_share) continue;
    Finding f;
    f.check = "op_type_share";
    f.title = fmt::format("{} takes {} of compute time (above {})", t.type, pct(t.share),
                          pct(c.th.type_share));
    f.ops = {t.type};
    f.time_us = t.total_us;
    f.evidence = {{"count", double(t.count), ""},   {"total_us", t.total_us, ""},
                  {"mean_us", t.mean_us(), ""},     {"min_us", t.min_us, ""},
                  {"max_us", t.max_us, ""},         {"share", t.share, ""}};
    f.advice = {fmt::format("Look at the shapes {} runs with: a fused or better-tiled kernel for "
                            "the dominant shape pays off most here",
                            t.type),
                "Check whether the calls are all needed (repeated recomputation, redundant casts "
                "or copies feeding it)"};
    c.add_finding(std::move(f));
  }
}

}  // namespace npusim::profile::advisor
