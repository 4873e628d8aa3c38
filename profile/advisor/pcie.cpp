// Rule pcie: the PCIe rate pcie_*.csv records against the chip's achievable rate (its nominal
// rate × hw_specs' pcie efficiency).
#include <fmt/format.h>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {

void check_pcie(Context& c) {
  if (!c.src.pcie) {
    c.skip("pcie", "no pcie_*.csv in the profile (msprof --sys-interconnection / --pcie)");
    return;
  }
  const auto& chip = c.report.chip;
  if (!chip.pcie_gbps || *chip.pcie_gbps <= 0) {
    c.skip("pcie", "the chip's PCIe rate is unknown: pass --hw");
    return;
  }
  double best = 0;
  std::string mode;
  for (const auto& r : read_pcie(*c.src.pcie)) {
    if (r.mode.find("MB/s") == std::string::npos) continue;
    if (r.max > best) best = r.max, mode = r.mode;
  }
  const double achieved_gbps = best / 1000.0;  // MB/s -> GB/s (decimal units)
  const double target = chip.pcie_efficiency * *chip.pcie_gbps;
  if (mode.empty() || achieved_gbps >= target) return;
  Finding f;
  f.check = "pcie";
  f.severity = "info";
  f.title = fmt::format("PCIe peaks at {:.2f} GB/s, below {:.0f} % of the {:.0f} GB/s link",
                        achieved_gbps, chip.pcie_efficiency * 100, *chip.pcie_gbps);
  f.evidence = {{"achieved_gbps", achieved_gbps, ""}, {"mode", std::nullopt, mode},
                {"target_gbps", target, ""}};
  f.advice = {"If host-device copies matter in this workload, check the link (lspci: width and "
              "generation), use pinned host memory and larger, fewer copies"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
