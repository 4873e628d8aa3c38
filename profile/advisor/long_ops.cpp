// Rule long_ops: single ops longer than Thresholds::long_op_us (1000 us: worth a look on their
// own in any training or inference step).
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_long_ops(Context& c) {
  std::vector<const Task*> longs;
  double total = 0;
  for (const Task& t : c.tasks) {
    if (t.kernel == kNone || t.duration_us <= c.th.long_op_us) continue;
    longs.push_back(&t);
    total += t.duration_us;
  }
  if (longs.empty()) return;
  std::stable_sort(longs.begin(), longs.end(),
                   [](const Task* a, const Task* b) { return a->duration_us > b->duration_us; });
  Finding f;
  f.check = "long_ops";
  f.title = fmt::format("{} ops run longer than {}", longs.size(), fmt_us(c.th.long_op_us));
  f.time_us = total;
  f.evidence.push_back({"count", double(longs.size()), ""});
  f.evidence.push_back({"total_us", total, ""});
  for (const Task* t : longs) {
    if (f.ops.size() >= c.max_listed()) break;
    f.ops.push_back(c.str(t->name));
    f.evidence.push_back({c.str(t->name), std::nullopt,
                          fmt::format("{} (line {})", fmt_us(t->duration_us), t->line)});
  }
  f.advice = {"Split or re-tile these ops; check their block dim uses every core",
              "Compare with the same op on other shapes: a slow one may have fallen off its fast "
              "path (unaligned or int64 inputs, an unsupported format)"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
