// Rule max_over_mean: calls of one kernel (same type, shapes, dtypes) whose max exceeds
// Thresholds::max_over_mean (2x) their mean, over at least max_over_mean_min_count calls.
// Repeated kernels vary by a 6-7 % coefficient of variation (research/observations.md), so 2x is
// far outside the noise.
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_max_over_mean(Context& c) {
  std::vector<const Kernel*> hits;
  for (const auto& k : c.kernels) {
    if (k.count >= std::uint64_t(c.th.max_over_mean_min_count) &&
        k.max_us > c.th.max_over_mean * (k.total_us / double(k.count))) {
      hits.push_back(&k);
    }
  }
  if (hits.empty()) return;
  auto excess = [](const Kernel* k) { return k->max_us - k->total_us / double(k->count); };
  std::stable_sort(hits.begin(), hits.end(),
                   [&](const Kernel* a, const Kernel* b) { return excess(a) > excess(b); });
  Finding f;
  f.check = "max_over_mean";
  f.title = fmt::format("{} kernels have calls far slower than their mean (max > {}x mean)",
                        hits.size(), c.th.max_over_mean);
  for (const Kernel* k : hits) {
    f.time_us += excess(k);
    if (f.ops.size() >= c.max_listed()) continue;
    f.ops.push_back(k->max_name);
    f.evidence.push_back(
        {k->max_name, std::nullopt,
         fmt::format("{} [{}]: {} calls, mean {}, max {} (line {})", k->type, k->shapes, k->count,
                     fmt_us(k->total_us / double(k->count)), fmt_us(k->max_us), k->max_line)});
  }
  f.advice = {"The same kernel on the same shapes was slow once: look at what ran beside it "
              "(communication, another stream) or before it (a synchronisation, a cold cache)",
              "If it is the first call, it is warm-up: profile more steps and skip the first"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
