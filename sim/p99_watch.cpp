#include "sim/p99_watch.h"

#include <algorithm>
#include <cmath>

#include "model/error.h"

namespace npusim::sim {

std::size_t nearest_rank(std::size_t n, double p) {
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  return std::clamp<std::size_t>(rank, 1, std::max<std::size_t>(n, 1));
}

TimeNs latency_limit_ns(double target_ms) {
  // The report compares static_cast<double>(ns) / 1e6 <= target_ms; find the largest integer that
  // passes that very comparison (the rounding of the product is not trusted, the test is).
  const auto meets = [&](TimeNs ns) { return static_cast<double>(ns) / 1e6 <= target_ms; };
  auto ns = static_cast<TimeNs>(std::floor(target_ms * 1e6));
  while (!meets(ns)) --ns;
  while (meets(ns + 1)) ++ns;
  return ns;
}

P99Watch::P99Watch(std::int64_t measured, double target_ms)
    : limit_ns_(latency_limit_ns(target_ms)),
      over_needed_(measured -
                   static_cast<std::int64_t>(nearest_rank(static_cast<std::size_t>(measured), 0.99)) +
                   1) {
  NPUSIM_CHECK(measured > 0);
  arrival_ns_.reserve(static_cast<std::size_t>(measured));
  done_.reserve(static_cast<std::size_t>(measured));
}

void P99Watch::arrived(TimeNs at_ns) {
  arrival_ns_.push_back(at_ns);
  done_.push_back(0);
}

void P99Watch::completed(std::int64_t i, TimeNs latency_ns) {
  const auto k = static_cast<std::size_t>(i);
  NPUSIM_CHECK(k < done_.size() && !done_[k]);
  done_[k] = 1;
  if (k < aged_) return;  // counted as over when it grew older than the limit in flight
  ++resolved_;
  if (latency_ns > limit_ns_) ++over_;
}

void P99Watch::age(TimeNs now_ns) {
  while (aged_ < arrival_ns_.size() && now_ns - arrival_ns_[aged_] > limit_ns_) {
    if (!done_[aged_]) {
      ++over_;
      ++resolved_;
    }
    ++aged_;
  }
}

void P99Watch::append_over_in_flight(TimeNs now_ns, std::vector<TimeNs>& out) const {
  for (std::size_t i = 0; i < aged_; ++i) {
    if (!done_[i]) out.push_back(now_ns - arrival_ns_[i]);
  }
}

}  // namespace npusim::sim
