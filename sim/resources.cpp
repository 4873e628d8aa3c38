#include "sim/resources.h"

#include <algorithm>
#include <cmath>

#include "model/error.h"

namespace npusim::sim {

CorePool::CorePool(int cores, int streams, int cap_per_stream)
    : total_(cores),
      free_(cores),
      cap_(cap_per_stream > 0 ? std::min(cap_per_stream, cores) : cores),
      held_(static_cast<std::size_t>(streams), 0) {
  NPUSIM_CHECK(cores >= 0 && streams >= 1 && cap_per_stream >= 0);
}

FluidBandwidth::FluidBandwidth(Simulator& sim, double capacity_bytes_per_ns, EventTarget* owner,
                               std::uint32_t done_kind)
    : sim_(sim), capacity_(capacity_bytes_per_ns), owner_(owner), done_kind_(done_kind) {
  NPUSIM_CHECK(capacity_bytes_per_ns > 0 && owner != nullptr);
}

void FluidBandwidth::settle() {
  const auto dt = static_cast<double>(sim_.now() - settled_ns_);
  if (dt > 0) {
    for (Transfer& t : active_) {
      const double moved = std::min(t.remaining_bytes, t.rate * dt);
      t.remaining_bytes -= moved;
      bytes_moved_ += moved;
    }
  }
  settled_ns_ = sim_.now();
}

bool FluidBandwidth::before(std::size_t a, std::size_t b) const noexcept {
  if (active_[a].cap != active_[b].cap) return active_[a].cap < active_[b].cap;
  return active_[a].tag < active_[b].tag;
}

void FluidBandwidth::reshare() {
  // Water-filling in ascending cap order: a transfer whose cap is below the equal share of
  // what is left takes its cap; the rest split the remainder equally.
  // order_ holds active_'s indices in ascending (cap, tag) order, kept up to date by start()
  // and on_event() (an insertion or a removal in a short list, rather than a sort each time).
  const std::size_t n = active_.size();
  double left = capacity_;
  for (std::size_t k = 0; k < n; ++k) {
    Transfer& t = active_[order_[k]];
    const double share = left / static_cast<double>(n - k);
    const double rate = std::min(t.cap, share);
    left -= rate;
    const bool changed = rate != t.rate || !sim_.pending(t.done);
    t.rate = rate;
    if (changed) {
      sim_.cancel(t.done);
      const double ns = ceil_nonneg(t.remaining_bytes / rate);
      t.done = sim_.schedule_in(static_cast<TimeNs>(ns), event_target_, event_kind_, t.tag);
    }
  }
}

// start() with other transfers moving: they are settled and all rates reshared.
void FluidBandwidth::start_shared(double bytes, double cap_bytes_per_ns, std::uint64_t tag) {
  settle();
  if (order_.empty()) order_.push_back(0);  // the lone transfer's order (start_alone())
  active_.push_back(Transfer{tag, bytes, cap_bytes_per_ns, 0.0, EventHandle{}});
  const std::size_t added = active_.size() - 1;
  // insertion into the short ordered list, from the back (no memmove call for a few entries)
  order_.push_back(added);
  std::size_t k = order_.size() - 1;
  while (k > 0 && before(added, order_[k - 1])) {
    order_[k] = order_[k - 1];
    --k;
  }
  order_[k] = added;
  reshare();
}

double FluidBandwidth::rate_of(std::uint64_t tag) const noexcept {
  for (const Transfer& t : active_) {
    if (t.tag == tag) return t.rate;
  }
  return 0.0;
}

void FluidBandwidth::on_event(std::uint32_t, std::uint64_t payload) {
  complete(payload);
  owner_->on_event(done_kind_, payload);
}

// complete() with other transfers still moving.
void FluidBandwidth::complete_shared(std::uint64_t payload) {
  settle();
  const auto it = std::find_if(active_.begin(), active_.end(),
                               [&](const Transfer& t) { return t.tag == payload; });
  NPUSIM_CHECK(it != active_.end());
  // Completion times are rounded up to whole nanoseconds, so the residue is below one ns of
  // transfer; count it as moved.
  bytes_moved_ += it->remaining_bytes;
  const auto removed = static_cast<std::size_t>(it - active_.begin());
  const std::size_t last = active_.size() - 1;
  *it = active_.back();
  active_.pop_back();
  // the index of the removed transfer leaves order_; the one moved into its place is renamed
  std::size_t w = 0;
  for (const std::size_t i : order_) {
    if (i != removed) order_[w++] = i == last ? removed : i;
  }
  order_.pop_back();
  if (!active_.empty()) reshare();
}

ServerPool::ServerPool(Simulator& sim, int servers, EventTarget* owner, std::uint32_t done_kind)
    : sim_(sim), servers_(servers), owner_(owner), done_kind_(done_kind) {
  NPUSIM_CHECK(servers >= 1 && owner != nullptr);
}

void ServerPool::on_event(std::uint32_t, std::uint64_t payload) {
  complete();
  owner_->on_event(done_kind_, payload);
}

void ServerPool::begin_next() {
  const Job j = queue_.front();
  queue_.pop_front();
  begin(j);
}

}  // namespace npusim::sim
