// Rule cube_utilization: how much of the chip's cube time the step used, from cycle counts.
// Two measures, named for what they count: "cube cores active" = Σ aic_total_cycles /
// (span × cube cores × clock) (a core is active while it runs any kernel, whatever its MAC array
// does), and "MAC busy" = Σ aic_mac_ratio × aic_total_cycles over the same base (the cycles the
// MAC array worked: research/profile_formats.md §7, msprof's PipeUtilization metric group).
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_cube_utilization(Context& c) {
  if (!c.has_column(&KernelFileInfo::has_cycles)) {
    c.skip("cube_utilization", "no aic_total_cycles column (the PipeUtilization metric group is "
                               "needed)");
    return;
  }
  const ChipFigures& chip = c.report.chip;
  if (!chip.cube_cores || !chip.freq_mhz || *chip.cube_cores <= 0 || *chip.freq_mhz <= 0) {
    c.skip("cube_utilization", "cube core count or frequency unknown: pass --hw");
    return;
  }
  const double rate = *chip.cube_cores * *chip.freq_mhz;  // cycles per µs of the whole chip
  bool has_mac = false;
  for (auto& s : c.report.steps) {
    if (s.span_us <= 0) continue;
    s.cube_utilization = s.cube_cycles / (s.span_us * rate);
    if (s.mac_cycles > 0) s.mac_utilization = s.mac_cycles / (s.span_us * rate);
    has_mac = has_mac || s.mac_cycles > 0;
  }
  for (auto& t : c.report.op_types) {
    if (t.total_us <= 0 || t.cube_cycles <= 0) continue;
    t.cube_utilization = t.cube_cycles / (t.total_us * rate);
    if (t.mac_cycles > 0) t.mac_utilization = t.mac_cycles / (t.total_us * rate);
  }
  Finding f;
  f.check = "cube_utilization";
  f.severity = "info";
  double cycles = 0, mac = 0, span = 0;
  for (const auto& s : c.report.steps) {
    cycles += s.cube_cycles;
    mac += s.mac_cycles;
    span += s.span_us;
    f.evidence.push_back(
        {s.step >= 0 ? fmt::format("step_{}", s.step) : "all", std::nullopt,
         fmt::format("cube cores active {}{} over {} ({} cube cores at {} MHz)",
                     pct(s.cube_utilization.value_or(0)),
                     s.mac_utilization ? ", MAC busy " + pct(*s.mac_utilization) : "",
                     fmt_us(s.span_us), *chip.cube_cores, *chip.freq_mhz)});
  }
  const double active = span > 0 ? cycles / (span * rate) : 0;
  f.title = fmt::format("cube cores active {} of the step{} (from cycle counts)", pct(active),
                        has_mac ? ", MAC busy " + pct(span > 0 ? mac / (span * rate) : 0) : "");
  f.evidence.insert(f.evidence.begin(), {"utilization", active, ""});
  if (has_mac) f.evidence.insert(f.evidence.begin() + 1, {"mac_utilization", mac / (span * rate), ""});
  std::vector<const TypeStat*> cube_types;
  for (const auto& t : c.report.op_types) {
    if (t.cube_utilization) cube_types.push_back(&t);
  }
  std::stable_sort(cube_types.begin(), cube_types.end(),
                   [](const TypeStat* a, const TypeStat* b) { return a->total_us > b->total_us; });
  for (const TypeStat* t : cube_types) {
    if (f.ops.size() >= c.max_listed()) break;
    f.ops.push_back(t->type);
    f.evidence.push_back(
        {t->type, std::nullopt,
         fmt::format("cube cores active {} while it runs{} ({} total)", pct(*t->cube_utilization),
                     t->mac_utilization ? ", MAC busy " + pct(*t->mac_utilization) : "",
                     fmt_us(t->total_us))});
  }
  f.advice = {"MAC busy far below cores active while a cube op runs points at its shapes "
              "(padding to 16x16 fractals, transposed or unaligned operands) or at loads the "
              "cube waits for (see the pipe-bound findings)",
              "Low utilisation over the step with high per-op utilisation means the cube waits "
              "for vector ops, communication or the host"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
