// Rule aicpu: ops that ran on the AI CPU, with int64 advice when their inputs are INT64 (the
// AI core kernels of most index ops take int32).
#include <fmt/format.h>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_aicpu(Context& c) {
  Finding f;
  f.check = "aicpu";
  std::uint64_t n = 0;
  for (const auto& t : c.report.op_types) {
    if (t.kind != "aicpu") continue;
    n += t.count;
    f.time_us += t.total_us;
    f.ops.push_back(t.type);
    f.evidence.push_back({t.type, std::nullopt,
                          fmt::format("{} calls, {} total, {} of compute", t.count,
                                      fmt_us(t.total_us), pct(t.share))});
  }
  if (n == 0) return;
  bool int64 = false;
  for (const auto& k : c.kernels) {
    if (k.kind == TaskKind::kAicpu && k.dtypes.find("INT64") != std::string::npos) int64 = true;
  }
  f.title = fmt::format("{} AI CPU ops take {}", n, fmt_us(f.time_us));
  if (int64) {
    f.advice.emplace_back("Some AI CPU ops take INT64 inputs: cast indices to int32 (or values "
                          "to fp32) where they fit, so the AI core kernel is used");
  }
  f.advice.emplace_back("Move the op to the host if its inputs are small, or replace it with an "
                        "AI core equivalent");
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
