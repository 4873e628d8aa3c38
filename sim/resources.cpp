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

int CorePool::grantable(int stream, int wanted, bool beyond_cap) const noexcept {
  const int room = beyond_cap ? free_ : cap_ - held_[static_cast<std::size_t>(stream)];
  return std::max(0, std::min({wanted, free_, room}));
}

void CorePool::acquire(int stream, int n, TimeNs now_ns, bool beyond_cap) {
  NPUSIM_CHECK(n >= 0 && n <= grantable(stream, n, beyond_cap));
  held_[static_cast<std::size_t>(stream)] += n;
  free_ -= n;
  busy_.add(now_ns, n);
}

void CorePool::release(int stream, int n, TimeNs now_ns) {
  int& held = held_[static_cast<std::size_t>(stream)];
  NPUSIM_CHECK(n >= 0 && n <= held);
  held -= n;
  free_ += n;
  busy_.add(now_ns, -n);
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
      const double ns = std::ceil(t.remaining_bytes / rate);
      t.done = sim_.schedule_in(static_cast<TimeNs>(ns), this, 0, t.tag);
    }
  }
}

void FluidBandwidth::start(double bytes, double cap_bytes_per_ns, std::uint64_t tag) {
  NPUSIM_CHECK(bytes > 0 && cap_bytes_per_ns > 0);
  settle();
  active_.push_back(Transfer{tag, bytes, cap_bytes_per_ns, 0.0, EventHandle{}});
  const std::size_t added = active_.size() - 1;
  const auto pos = std::lower_bound(order_.begin(), order_.end(), added,
                                    [&](std::size_t a, std::size_t b) { return before(a, b); });
  order_.insert(pos, added);
  reshare();
}

double FluidBandwidth::rate_of(std::uint64_t tag) const noexcept {
  for (const Transfer& t : active_) {
    if (t.tag == tag) return t.rate;
  }
  return 0.0;
}

void FluidBandwidth::on_event(std::uint32_t, std::uint64_t payload) {
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
  order_.erase(std::find(order_.begin(), order_.end(), removed));
  if (removed != last) *std::find(order_.begin(), order_.end(), last) = removed;
  if (!active_.empty()) reshare();
  owner_->on_event(done_kind_, payload);
}

ServerPool::ServerPool(Simulator& sim, int servers, EventTarget* owner, std::uint32_t done_kind)
    : sim_(sim), servers_(servers), owner_(owner), done_kind_(done_kind) {
  NPUSIM_CHECK(servers >= 1 && owner != nullptr);
}

void ServerPool::begin(const Job& j) {
  ++busy_;
  busy_time_.add(sim_.now(), 1);
  sim_.schedule_in(j.service_ns, this, 0, j.tag);
}

void ServerPool::submit(TimeNs service_ns, std::uint64_t tag) {
  NPUSIM_CHECK(service_ns >= 0);
  if (busy_ < servers_) {
    begin(Job{service_ns, tag});
  } else {
    queue_.push_back(Job{service_ns, tag});
  }
}

void ServerPool::on_event(std::uint32_t, std::uint64_t payload) {
  --busy_;
  busy_time_.add(sim_.now(), -1);
  if (!queue_.empty()) {
    const Job j = queue_.front();
    queue_.pop_front();
    begin(j);
  }
  owner_->on_event(done_kind_, payload);
}

}  // namespace npusim::sim
