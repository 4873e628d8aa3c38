// Rule comm_byte_alignment: transfers of a collective whose size is not a multiple of
// kAlignBytes (512 B). SDMA moves data in 512-byte bursts; a transfer that ends mid-burst costs a
// partial burst and, for the reduce collectives, a split of the last block. Source:
// msprof-analyze advisor rules/en/byte_alignment.yaml (min_size: 512 bytes). The reference reads
// each HCCL task's size from the trace; npusim reads the per-link "Size Distribution" of
// communication.json (packet size -> count, time), which every torch_npu profile with
// communication has, so it needs no trace file.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

constexpr double kAlignBytes = 512;

}  // namespace

void check_comm_byte_alignment(Context& c) {
  if (c.collectives.empty()) {
    if (!c.communication.empty()) {
      c.skip("comm_byte_alignment", "no communication.json (torch_npu writes it with "
                                    "communication): no transfer sizes");
    }
    return;
  }
  struct Hit {
    std::string name, link;
    double bytes, count, time_ms;
  };
  std::vector<Hit> hits;
  double time_ms = 0, count = 0;
  for (const auto& rec : c.collectives) {
    for (const auto& l : rec.links) {
      if (l.link == "SDMA" && l.packets.empty()) continue;  // SDMA repeats HCCS's sizes
      for (const auto& p : l.packets) {
        if (p.bytes <= 0 || std::fmod(p.bytes, kAlignBytes) == 0) continue;
        hits.push_back({rec.name, l.link, p.bytes, p.count, p.time_ms});
        time_ms += p.time_ms;
        count += p.count;
      }
    }
  }
  if (hits.empty()) return;
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& a, const Hit& b) { return a.time_ms > b.time_ms; });
  Finding f;
  f.check = "comm_byte_alignment";
  f.title = fmt::format("{:.0f} transfers of {} collectives are not multiples of {:.0f} bytes",
                        count, std::count_if(c.collectives.begin(), c.collectives.end(),
                                             [&](const CollectiveRecord& r) {
                                               return std::any_of(hits.begin(), hits.end(),
                                                                  [&](const Hit& h) {
                                                                    return h.name == r.name;
                                                                  });
                                             }),
                        kAlignBytes);
  // At stake: the transit time of the unaligned transfers (an upper bound; aligning them saves
  // a part of it).
  f.time_us = time_ms * 1e3;
  f.evidence = {{"transfers", count, ""}, {"transit_us", time_ms * 1e3, ""}};
  std::string key;
  for (const Hit& h : hits) {
    if (f.ops.size() >= c.max_listed()) break;
    if (std::find(f.ops.begin(), f.ops.end(), h.name) == f.ops.end()) f.ops.push_back(h.name);
    key = fmt::format("{} {} {:.0f} B", h.name, h.link, h.bytes);
    f.evidence.push_back({key, std::nullopt,
                          fmt::format("{:.0f} transfers of {:.0f} B ({:.0f} B past a {:.0f}-byte "
                                      "boundary), {}",
                                      h.count, h.bytes, std::fmod(h.bytes, kAlignBytes),
                                      kAlignBytes, fmt_us(h.time_ms * 1e3))});
  }
  f.advice = {"Pad the communicated buffers (gradient buckets, all-gather shards) to a multiple "
              "of 512 bytes: e.g. round the bucket size or the sharded parameter count up"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
