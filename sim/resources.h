#pragma once
// The shared resources of one card, each a mechanism of its own (DESIGN.md "sim"):
// - TimeWeighted: the time integral of a piecewise-constant quantity (busy cores, requests in
//   the system), for utilisation and Little's law.
// - CorePool: cube or vector cores, optionally capped per stream (the "core limit").
// - FluidBandwidth: HBM bandwidth shared by all running transfers as a fluid; rates are
//   recomputed (max-min fair, each transfer capped at the rate it reaches alone) whenever the
//   set of transfers changes, and completion events are re-keyed, as SimGrid does.
// - ServerPool: k identical servers with one FIFO queue (the PCIe link, the AI CPU cores, the
//   host cores shared by a card's streams).
// The L2 bandwidth is a second FluidBandwidth; the task scheduler, one server whose work on a
// kernel overlaps that kernel's head, is a "free at" time in card_stream.cpp.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "model/error.h"
#include "sim/simulator.h"

namespace npusim::sim {

/// std::ceil for 0 <= x < 2^63, inline (without SSE4.1 the library's is a call through the PLT):
/// a double of 2^52 or more is already whole, and below that the truncation is exact.
[[nodiscard]] inline double ceil_nonneg(double x) noexcept {
  const auto t = static_cast<double>(static_cast<std::int64_t>(x));
  return t < x ? t + 1.0 : t;
}

/// Integral over time of a piecewise-constant value, from a chosen start.
class TimeWeighted {
 public:
  /// Sets the value from `now_ns` on.
  void set(TimeNs now_ns, double value) noexcept {
    area_ += value_ * static_cast<double>(now_ns - last_ns_);
    last_ns_ = now_ns;
    value_ = value;
  }
  /// Adds `delta` to the value from `now_ns` on.
  void add(TimeNs now_ns, double delta) noexcept { set(now_ns, value_ + delta); }
  /// Forgets the area so far: integration starts at `now_ns`.
  void restart(TimeNs now_ns) noexcept {
    area_ = 0;
    last_ns_ = now_ns;
    start_ns_ = now_ns;
  }
  /// The integral (value × ns) from the start to `now_ns`.
  [[nodiscard]] double area(TimeNs now_ns) const noexcept {
    return area_ + value_ * static_cast<double>(now_ns - last_ns_);
  }
  /// The time average from the start to `now_ns` (0 over an empty interval).
  [[nodiscard]] double mean(TimeNs now_ns) const noexcept {
    return now_ns > start_ns_ ? area(now_ns) / static_cast<double>(now_ns - start_ns_) : 0.0;
  }
  /// The current value.
  [[nodiscard]] double value() const noexcept { return value_; }

 private:
  double value_ = 0;
  double area_ = 0;
  TimeNs last_ns_ = 0;
  TimeNs start_ns_ = 0;
};

/// A pool of identical cores; each stream may hold at most its cap at a time, except for ops
/// that ignore the core limit (they may take any free core).
class CorePool {
 public:
  /// `cores` in the pool; `streams` users; `cap_per_stream` 0 = a stream may use all cores.
  CorePool(int cores, int streams, int cap_per_stream);
  /// How many of `wanted` cores `stream` could take now: min(wanted, free, cap - held), or
  /// min(wanted, free) for an op that ignores the core limit (`beyond_cap`).
  [[nodiscard]] int grantable(int stream, int wanted, bool beyond_cap = false) const noexcept {
    const int room = beyond_cap ? free_ : cap_ - held_[static_cast<std::size_t>(stream)];
    return std::max(0, std::min(wanted, std::min(free_, room)));
  }
  /// Takes `n` cores for `stream` (n <= grantable(stream, n, beyond_cap)).
  void acquire(int stream, int n, TimeNs now_ns, bool beyond_cap = false) {
    NPUSIM_CHECK(n >= 0 && n <= grantable(stream, n, beyond_cap));
    held_[static_cast<std::size_t>(stream)] += n;
    free_ -= n;
    add_busy(now_ns, n);
  }
  /// Returns `n` cores held by `stream`.
  void release(int stream, int n, TimeNs now_ns) {
    int& held = held_[static_cast<std::size_t>(stream)];
    NPUSIM_CHECK(n >= 0 && n <= held);
    held -= n;
    free_ += n;
    add_busy(now_ns, -n);
  }
  /// Cores in the pool.
  [[nodiscard]] int total() const noexcept { return total_; }
  /// Cores not held by anyone.
  [[nodiscard]] int free() const noexcept { return free_; }
  /// The most a stream may hold (its cap, or all cores).
  [[nodiscard]] int cap() const noexcept { return cap_; }
  /// Busy cores integrated over time (core·ns), for utilisation.
  [[nodiscard]] TimeWeighted& busy() noexcept { return busy_; }

 private:
  // busy_.add(), left out when nothing changes and nothing accrues (no core held before or
  // after: an op of the other pool), which leaves the integral exactly as it was (0 x dt = 0).
  void add_busy(TimeNs now_ns, int n) noexcept {
    if (n != 0 || busy_.value() != 0) busy_.add(now_ns, n);
  }

  int total_;
  int free_;
  int cap_;
  std::vector<int> held_;
  TimeWeighted busy_;
};

/// A bandwidth shared as a fluid by concurrent transfers.
///
/// Each transfer has a size and a cap (the rate it reaches alone, set by its own DMA engines).
/// Rates are the max-min fair allocation of the capacity under those caps (water-filling): when
/// the caps fit, everyone runs at its cap; when they do not, the capacity is split equally among
/// the transfers not limited by their own cap. Whenever a transfer starts or ends, the bytes
/// moved so far are settled, rates recomputed, and the completion event of every transfer whose
/// rate changed is cancelled and scheduled again at its new finish time.
class FluidBandwidth final : public EventTarget {
 public:
  /// `capacity_bytes_per_ns` > 0. On completion, `owner->on_event(done_kind, tag)` is called
  /// synchronously from inside the completion event.
  FluidBandwidth(Simulator& sim, double capacity_bytes_per_ns, EventTarget* owner,
                 std::uint32_t done_kind);
  /// A transfer moving alone: its rate, min(cap, capacity), and its duration in whole ns.
  struct Alone {
    double rate = 0;
    TimeNs ns = 0;
  };
  /// What a transfer of `bytes` (> 0) capped at `cap_bytes_per_ns` (> 0) does alone (start()
  /// with no other transfer moving). A caller that starts the same transfer many times (the
  /// card model: once per op timing) keeps it and passes it to start().
  [[nodiscard]] Alone alone(double bytes, double cap_bytes_per_ns) const {
    NPUSIM_CHECK(bytes > 0 && cap_bytes_per_ns > 0);
    const double rate = std::min(cap_bytes_per_ns, capacity_);
    return Alone{rate, static_cast<TimeNs>(ceil_nonneg(bytes / rate))};
  }
  /// Starts moving `bytes` (> 0) at no more than `cap_bytes_per_ns` (> 0).
  void start(double bytes, double cap_bytes_per_ns, std::uint64_t tag) {
    start(bytes, cap_bytes_per_ns, alone(bytes, cap_bytes_per_ns), tag);
  }
  /// start() with alone(bytes, cap_bytes_per_ns) already computed.
  [[gnu::always_inline]] void start(double bytes, double cap_bytes_per_ns, const Alone& a,
                                    std::uint64_t tag) {
    if (active_.empty()) {
      start_alone(bytes, cap_bytes_per_ns, a, tag);
    } else {
      start_shared(bytes, cap_bytes_per_ns, tag);
    }
  }
  /// From now on the completion events go to the owner itself, as
  /// `owner->on_event(done_kind, tag)` at the same time and order, and the owner calls
  /// complete(tag) first, then handles the completion: one virtual call per completion instead
  /// of two (the card model's hot loop).
  void route_to_owner() noexcept {
    event_target_ = owner_;
    event_kind_ = done_kind_;
  }
  /// Books the end of transfer `tag` (settles, removes it, reshares the rest): what on_event()
  /// does before calling the owner.
  void complete(std::uint64_t tag) {
    if (active_.size() == 1) {
      complete_alone(tag);
    } else {
      complete_shared(tag);
    }
  }
  /// Transfers in flight.
  [[nodiscard]] std::size_t active() const noexcept { return active_.size(); }
  /// The current rate of the transfer with `tag` (bytes/ns), or 0 when none.
  [[nodiscard]] double rate_of(std::uint64_t tag) const noexcept;
  /// Bytes moved, integrated (for the achieved-bandwidth report).
  [[nodiscard]] double bytes_moved() const noexcept { return bytes_moved_; }
  /// Handles this resource's own completion events.
  void on_event(std::uint32_t kind, std::uint64_t payload) override;

 private:
  struct Transfer {
    std::uint64_t tag;
    double remaining_bytes;
    double cap;
    double rate;
    EventHandle done;
  };
  void settle();
  void reshare();
  /// start() with no other transfer moving (the usual case), inline: reshare() with one
  /// transfer, written out. Its share is the whole capacity, its rate min(cap, capacity)
  /// (alone()).
  [[gnu::always_inline]] void start_alone(double bytes, double cap_bytes_per_ns, const Alone& a,
                                          std::uint64_t tag) {
    settled_ns_ = sim_.now();
    const EventHandle done = sim_.schedule_in(a.ns, event_target_, event_kind_, tag);
    active_.push_back(Transfer{tag, bytes, cap_bytes_per_ns, a.rate, done});
    // order_ is left alone: a lone transfer's order is {0}, written by start_shared() when a
    // second one joins (order_ is kept only while two or more move).
  }
  void start_shared(double bytes, double cap_bytes_per_ns, std::uint64_t tag);
  /// complete() of the last transfer (the usual case), inline: settle() over one transfer and
  /// the residue counted as moved, the same operations in the same order.
  void complete_alone(std::uint64_t tag) {
    Transfer& t = active_[0];
    NPUSIM_CHECK(t.tag == tag);
    const TimeNs now = sim_.now();
    const auto dt = static_cast<double>(now - settled_ns_);
    if (dt > 0) {
      const double moved = std::min(t.remaining_bytes, t.rate * dt);
      t.remaining_bytes -= moved;
      bytes_moved_ += moved;
    }
    settled_ns_ = now;
    bytes_moved_ += t.remaining_bytes;
    active_.clear();
  }
  void complete_shared(std::uint64_t tag);
  /// Water-filling order: ascending cap, then tag.
  [[nodiscard]] bool before(std::size_t a, std::size_t b) const noexcept;

  Simulator& sim_;
  double capacity_;
  EventTarget* owner_;
  std::uint32_t done_kind_;
  EventTarget* event_target_ = this;  // where completion events go (route_to_owner())
  std::uint32_t event_kind_ = 0;
  std::vector<Transfer> active_;
  // indices of active_ in water-filling order, while two or more move (with one: empty or {0})
  std::vector<std::size_t> order_;
  TimeNs settled_ns_ = 0;
  double bytes_moved_ = 0;
};

/// k identical servers and one FIFO queue.
class ServerPool final : public EventTarget {
 public:
  /// On each completion, `owner->on_event(done_kind, tag)` is called synchronously.
  ServerPool(Simulator& sim, int servers, EventTarget* owner, std::uint32_t done_kind);
  /// Queues a job of `service_ns`; it starts when a server is free (FIFO).
  [[gnu::always_inline]] void submit(TimeNs service_ns, std::uint64_t tag) {
    NPUSIM_CHECK(service_ns >= 0);
    if (busy_ < servers_) {
      begin(Job{service_ns, tag});
    } else {
      queue_.push_back(Job{service_ns, tag});
    }
  }
  /// As FluidBandwidth::route_to_owner(): completions go to the owner as
  /// `owner->on_event(done_kind, tag)`; it calls complete() first, then handles them.
  void route_to_owner() noexcept {
    event_target_ = owner_;
    event_kind_ = done_kind_;
  }
  /// Books the end of a job (frees its server, starts the next queued one): what on_event() does
  /// before calling the owner.
  void complete() {
    --busy_;
    busy_time_.add(sim_.now(), -1);
    if (!queue_.empty()) begin_next();
  }
  /// Servers busy now.
  [[nodiscard]] int busy() const noexcept { return busy_; }
  /// Jobs waiting for a server.
  [[nodiscard]] std::size_t queued() const noexcept { return queue_.size(); }
  /// Busy servers integrated over time.
  [[nodiscard]] TimeWeighted& busy_time() noexcept { return busy_time_; }
  /// Handles this pool's own completion events.
  void on_event(std::uint32_t kind, std::uint64_t payload) override;

 private:
  struct Job {
    TimeNs service_ns;
    std::uint64_t tag;
  };
  [[gnu::always_inline]] void begin(const Job& j) {
    ++busy_;
    busy_time_.add(sim_.now(), 1);
    sim_.schedule_in(j.service_ns, event_target_, event_kind_, j.tag);
  }
  void begin_next();

  Simulator& sim_;
  int servers_;
  int busy_ = 0;
  EventTarget* owner_;
  std::uint32_t done_kind_;
  EventTarget* event_target_ = this;  // where completion events go (route_to_owner())
  std::uint32_t event_kind_ = 0;
  std::deque<Job> queue_;
  TimeWeighted busy_time_;
};

}  // namespace npusim::sim
