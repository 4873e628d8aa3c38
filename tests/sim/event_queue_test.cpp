#include "sim/event_queue.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "model/error.h"
#include "sim/simulator.h"

using npusim::sim::Event;
using npusim::sim::EventHandle;
using npusim::sim::EventQueue;
using npusim::sim::EventTarget;
using npusim::sim::Simulator;
using npusim::sim::TimeNs;

namespace {

// Records every event it receives with the time it ran at.
class Recorder final : public EventTarget {
 public:
  explicit Recorder(Simulator* sim = nullptr) : sim_(sim) {}
  void on_event(std::uint32_t kind, std::uint64_t payload) override {
    seen.emplace_back(sim_ != nullptr ? sim_->now() : 0, kind, payload);
  }
  std::vector<std::tuple<TimeNs, std::uint32_t, std::uint64_t>> seen;

 private:
  Simulator* sim_;
};

}  // namespace

TEST_CASE("events pop in time order, then priority, then insertion order", "[event_queue]") {
  EventQueue q;
  Recorder r;
  q.push(20, 0, &r, 1, 0);
  q.push(10, 5, &r, 2, 0);
  q.push(10, 0, &r, 3, 0);
  q.push(10, 0, &r, 4, 0);
  q.push(10, -1, &r, 5, 0);
  std::vector<std::uint32_t> kinds;
  Event e;
  while (q.pop(e)) kinds.push_back(e.kind);
  CHECK(kinds == std::vector<std::uint32_t>{5, 3, 4, 2, 1});
}

TEST_CASE("a cancelled event never pops and cancelling twice reports false", "[event_queue]") {
  EventQueue q;
  Recorder r;
  const EventHandle a = q.push(5, 0, &r, 1, 0);
  q.push(6, 0, &r, 2, 0);
  CHECK(q.size() == 2);
  CHECK(q.cancel(a));
  CHECK_FALSE(q.cancel(a));
  CHECK_FALSE(q.pending(a));
  CHECK(q.size() == 1);
  Event e;
  REQUIRE(q.pop(e));
  CHECK(e.kind == 2);
  CHECK_FALSE(q.pop(e));
  CHECK(q.empty());
}

TEST_CASE("a handle of an event that already ran cannot cancel the event now in its slot",
          "[event_queue]") {
  EventQueue q;
  Recorder r;
  const EventHandle first = q.push(1, 0, &r, 1, 0);
  Event e;
  REQUIRE(q.pop(e));
  const EventHandle second = q.push(2, 0, &r, 2, 0);
  CHECK(second.slot == first.slot);  // the slot is reused ...
  CHECK_FALSE(q.cancel(first));      // ... but the old handle no longer owns it
  CHECK(q.pending(second));
  REQUIRE(q.pop(e));
  CHECK(e.kind == 2);
}

TEST_CASE("the queue agrees with a sorted reference under random pushes and cancels",
          "[event_queue]") {
  std::mt19937_64 rng(42);
  EventQueue q;
  Recorder r;
  struct Ref {
    TimeNs t;
    std::int32_t prio;
    std::uint64_t seq;
    EventHandle h;
    bool cancelled;
  };
  std::vector<Ref> ref;
  for (int i = 0; i < 20000; ++i) {
    const TimeNs t = static_cast<TimeNs>(rng() % 1000);
    const auto prio = static_cast<std::int32_t>(rng() % 3);
    const EventHandle h = q.push(t, prio, &r, 0, static_cast<std::uint64_t>(i));
    ref.push_back({t, prio, h.seq, h, false});
    if (rng() % 3 == 0) {
      Ref& victim = ref[rng() % ref.size()];
      CHECK(q.cancel(victim.h) == !victim.cancelled);
      victim.cancelled = true;
    }
  }
  std::vector<Ref> live;
  std::copy_if(ref.begin(), ref.end(), std::back_inserter(live),
               [](const Ref& x) { return !x.cancelled; });
  std::sort(live.begin(), live.end(), [](const Ref& a, const Ref& b) {
    return std::tie(a.t, a.prio, a.seq) < std::tie(b.t, b.prio, b.seq);
  });
  REQUIRE(q.size() == live.size());
  Event e;
  std::size_t i = 0;
  while (q.pop(e)) {
    REQUIRE(i < live.size());
    CHECK(e.seq == live[i].seq);
    ++i;
  }
  CHECK(i == live.size());
}

TEST_CASE("interleaved pushes, pops and cancels pop in key order as the queue grows and shrinks",
          "[event_queue]") {
  // The queue keeps a sorted array while small and a heap while large; a random walk of its size
  // between empty and a few hundred crosses both switches many times. A std::set of
  // (time, priority, seq) is the reference for every pop.
  std::mt19937_64 rng(7);
  EventQueue q;
  Recorder r;
  std::set<std::tuple<TimeNs, std::int32_t, std::uint64_t>> ref;
  std::vector<std::pair<EventHandle, std::tuple<TimeNs, std::int32_t, std::uint64_t>>> handles;
  TimeNs clock = 0;
  std::size_t pops = 0;
  std::size_t max_size = 0;
  for (int round = 0; round < 60; ++round) {
    const bool grow = round % 4 < 2;
    const int steps = 100 + static_cast<int>(rng() % 500);
    for (int i = 0; i < steps; ++i) {
      const auto op = rng() % 10;
      if (op < (grow ? 6U : 2U)) {
        // mostly near-future events, some far ones and some at the current time
        const TimeNs t = clock + static_cast<TimeNs>(rng() % 4 == 0 ? rng() % 5000 : rng() % 50);
        const auto prio = static_cast<std::int32_t>(rng() % 2);
        const EventHandle h = q.push(t, prio, &r, 0, 0);
        ref.emplace(t, prio, h.seq);
        handles.emplace_back(h, std::make_tuple(t, prio, h.seq));
      } else if (op < 9) {
        Event e;
        const bool got = q.pop(e);
        REQUIRE(got == !ref.empty());
        if (!got) continue;
        REQUIRE(std::make_tuple(e.time_ns, e.priority, e.seq) == *ref.begin());
        ref.erase(ref.begin());
        clock = e.time_ns;
        ++pops;
      } else if (!handles.empty()) {
        const auto& [h, key] = handles[rng() % handles.size()];
        CHECK(q.cancel(h) == (ref.erase(key) == 1));
      }
      REQUIRE(q.size() == ref.size());
      max_size = std::max(max_size, ref.size());
    }
  }
  Event e;
  while (q.pop(e)) {
    REQUIRE(std::make_tuple(e.time_ns, e.priority, e.seq) == *ref.begin());
    ref.erase(ref.begin());
  }
  CHECK(ref.empty());
  CHECK(pops > 1000);
  CHECK(max_size > 100);  // the walk did reach the heap layout (past 64 entries)
}

TEST_CASE("re-keying one event many times keeps the heap bounded", "[event_queue]") {
  EventQueue q;
  Recorder r;
  q.push(1'000'000, 0, &r, 9, 0);
  EventHandle h = q.push(10, 0, &r, 1, 0);
  for (int i = 0; i < 100000; ++i) {
    q.cancel(h);
    h = q.push(10 + i, 0, &r, 1, 0);
    Event e;
    if (i % 2 == 0) {
      // a pop in between lets the queue discard stale entries and compact
      q.push(5 + i, 0, &r, 2, 0);
      REQUIRE(q.pop(e));
    }
  }
  CHECK(q.size() == 2);
  CHECK(q.heap_entries() < 1000);
}

TEST_CASE("the simulator runs handlers at their times and counts events", "[simulator]") {
  Simulator sim(1);
  Recorder r(&sim);
  sim.schedule_at(30, &r, 3);
  sim.schedule_at(10, &r, 1);
  const EventHandle h = sim.schedule_at(20, &r, 2);
  CHECK(sim.cancel(h));
  CHECK(sim.run() == 2);
  REQUIRE(r.seen.size() == 2);
  CHECK(r.seen[0] == std::make_tuple(TimeNs{10}, 1u, std::uint64_t{0}));
  CHECK(r.seen[1] == std::make_tuple(TimeNs{30}, 3u, std::uint64_t{0}));
  CHECK(sim.now() == 30);
  CHECK(sim.stats().events_processed == 2);
  CHECK(sim.stats().events_cancelled == 1);
  CHECK(sim.stats().events_scheduled == 3);
}

TEST_CASE("run stops before events after the horizon and resumes later", "[simulator]") {
  Simulator sim(1);
  Recorder r(&sim);
  sim.schedule_at(10, &r, 1);
  sim.schedule_at(20, &r, 2);
  sim.schedule_at(21, &r, 3);
  CHECK(sim.run(20) == 2);
  CHECK(sim.now() == 20);
  CHECK(sim.run() == 1);
  CHECK(sim.now() == 21);
}

namespace {
// Schedules an event in the past from inside a handler.
class TimeTraveller final : public EventTarget {
 public:
  explicit TimeTraveller(Simulator& sim) : sim_(sim) {}
  void on_event(std::uint32_t, std::uint64_t) override {
    sim_.schedule_at(sim_.now() - 1, this, 0);
  }

 private:
  Simulator& sim_;
};
}  // namespace

TEST_CASE("scheduling an event before the current time is refused", "[simulator]") {
  Simulator sim(1);
  TimeTraveller t(sim);
  sim.schedule_at(100, &t, 0);
  CHECK_THROWS_AS(sim.run(), npusim::InternalError);
  CHECK(sim.now() == 100);
}

TEST_CASE("the same seed draws the same numbers and exponentials have the asked mean",
          "[simulator]") {
  Simulator a(7);
  Simulator b(7);
  double sum = 0;
  const int n = 200000;
  int mismatches = 0;
  int negatives = 0;
  for (int i = 0; i < n; ++i) {
    const double x = a.exponential(3.0);
    if (x != b.exponential(3.0)) ++mismatches;
    if (x < 0) ++negatives;
    sum += x;
  }
  CHECK(mismatches == 0);
  CHECK(negatives == 0);
  // standard error of the mean is 3/sqrt(n) = 0.0067; 5 sigma
  CHECK(sum / n == Approx(3.0).margin(0.034));
}

TEST_CASE("microseconds convert to the nearest nanosecond", "[simulator]") {
  CHECK(npusim::sim::us_to_ns(1.0) == 1000);
  CHECK(npusim::sim::us_to_ns(0.0004) == 0);
  CHECK(npusim::sim::us_to_ns(0.0006) == 1);
  CHECK(npusim::sim::us_to_ns(35.2) == 35200);
  CHECK_THROWS_AS(npusim::sim::us_to_ns(-1.0), npusim::InternalError);
}
