// Rule comm_small_packets: too many collectives move little data, so per-collective launch and
// synchronisation costs dominate. Source: msprof-analyze advisor rules/en/packet.yaml: an SDMA
// (intra-node) transfer under 16 MB or an RDMA (inter-node) one under 1 MB is small, and a
// finding is due when small ones are at least 20 % of the collectives. Only collectives count
// (point-to-point transfers of pipeline parallelism are sized by the activations, not by a
// bucket the user can grow).
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

constexpr double kSmallSdmaMb = 16;
constexpr double kSmallRdmaMb = 1;
constexpr double kSmallShare = 0.2;

}  // namespace

void check_comm_small_packets(Context& c) {
  if (c.collectives.empty()) return;
  std::vector<const CollectiveRecord*> small;
  std::size_t moving = 0;
  double small_ms = 0;
  for (const auto& rec : c.collectives) {
    if (rec.group != "collective") continue;
    double sdma = 0, rdma = 0;
    for (const auto& l : rec.links) {
      if (l.link == "RDMA") rdma += l.size_mb;
      if (l.link == "SDMA") sdma += l.size_mb;
    }
    if (sdma <= 0 && rdma <= 0) continue;  // moved nothing measurable (a barrier-like call)
    ++moving;
    if ((sdma > 0 && sdma < kSmallSdmaMb) || (rdma > 0 && rdma < kSmallRdmaMb)) {
      small.push_back(&rec);
      small_ms += rec.elapse_ms;
    }
  }
  if (moving == 0 || double(small.size()) < kSmallShare * double(moving)) return;
  std::stable_sort(small.begin(), small.end(), [](const auto* a, const auto* b) {
    return a->elapse_ms > b->elapse_ms;
  });
  Finding f;
  f.check = "comm_small_packets";
  f.title = fmt::format("{} of {} collectives move less than {:.0f} MB (SDMA) / {:.0f} MB (RDMA)",
                        small.size(), moving, kSmallSdmaMb, kSmallRdmaMb);
  f.time_us = small_ms * 1e3;
  f.evidence = {{"small", double(small.size()), ""}, {"collectives", double(moving), ""},
                {"elapse_us", small_ms * 1e3, ""}};
  for (const auto* rec : small) {
    if (f.ops.size() >= c.max_listed()) break;
    double mb = 0;
    for (const auto& l : rec->links) {
      if (l.link == "SDMA" || l.link == "RDMA") mb += l.size_mb;
    }
    f.ops.push_back(rec->name);
    f.evidence.push_back({rec->name, std::nullopt,
                          fmt::format("{:.4g} MB in {} ({})", mb, fmt_us(rec->elapse_ms * 1e3),
                                      rec->step)});
  }
  f.advice = {"If the small collectives are data-parallel gradient reductions: a larger batch, "
              "gradient accumulation or a larger bucket size sends fewer, larger ones",
              "With ZeRO-3 sharding, ZeRO-2 / ZeRO-1 (if memory allows) removes the per-layer "
              "all-gathers; fused optimizers cut the number of collectives too"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
