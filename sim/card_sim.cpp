#include "sim/card_sim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>

#include "model/op_table.h"
#include "model/predict.h"
#include "sim/anchoring.h"
#include "sim/p99_watch.h"
#include "sim/resources.h"

namespace npusim::sim {

namespace {

// Event kinds this model schedules on itself (or receives from its resources).
enum Kind : std::uint32_t {
  kArrival,
  kWindowExpired,
  kPcieDone,
  kLaunchDone,
  kHostOpDone,
  kSyncDone,
  kMemoryDone,
  kComputeDone,
  kAicpuDone,
  kPcieOutDone,
  kHostDone,    // host work of any stream on the shared host cores (payload: stream, HostWork)
  kDispatched,  // the task scheduler reaches a stream's next op
  kL2Done,
};

// What a stream's host thread runs on the shared host cores.
enum HostWork : std::uint64_t { kLaunch, kHostOp, kSync, kHostWorkKinds };

// Among events of the same nanosecond, completions run before arrivals and batching windows, so
// a request arriving exactly when a stream frees finds the stream free.
constexpr std::int32_t kPrioCompletion = 0;
constexpr std::int32_t kPrioArrival = 1;

// L2 hit ratios are quantised to 1/32 so contention changes hit the prediction cache.
constexpr int kL2Buckets = 32;

enum class Unit : std::uint8_t { kCube, kVector, kMix, kAicpu, kHost };

// What never changes about an op across gears and core grants.
struct OpInfo {
  std::string name;
  std::string type;
  Unit unit = Unit::kVector;
  bool dynamic = false;  // data-dependent output shape: host round trip after it
  bool bypass = false;   // ignores the stream's core limit (dynamic-shape or marked op)
  TimeNs launch_ns = 0;  // host time to launch it
  std::optional<double> fixed_us;
  int fixed_block_dim = 1;
  double device_scale = 1;  // SimOptions::device_time_scale of its family (predicted ops only)
};

// One op at one gear, core grant and L2 hit ratio.
struct Timing {
  TimeNs compute_ns = 0;  // device time outside the memory phase
  TimeNs memory_ns = 0;   // the memory phase when alone
  double hbm_bytes = 0;   // bytes the memory phase moves through the shared HBM
  double l2_bytes = 0;    // bytes it moves through the shared L2 (every byte read or written)
  double bytes_in = 0;    // bytes the op reads (the graph's working set in L2)
  TimeNs host_ns = 0;     // host ops: their whole time on the host thread
  int cube = 0;           // cores held
  int vector = 0;
};

struct Request {
  TimeNs arrival_ns = 0;
  std::int64_t samples = 0;
  std::int32_t chunks_left = 0;
  TimeNs service_ns = 0;  // of the chunk that finished last
};

struct Batch {
  std::uint32_t first_member = 0;  // into members_
  std::uint32_t member_count = 0;
  std::int64_t chunk_of = -1;  // a chunk of an oversize request: that request's id
  std::int64_t samples = 0;
  std::int64_t gear = 0;
  std::uint32_t gear_idx = 0;
  TimeNs start_ns = 0;
};

struct Stream {
  std::int64_t batch = -1;
  std::uint32_t launched = 0;   // ops handed to the device (or run on the host)
  std::uint32_t completed = 0;  // ops finished
  bool host_busy = false;
  bool device_busy = false;
  bool barrier = false;       // a launched dynamic-shape op has not been synced yet
  bool sync_pending = false;  // the host owes a shape round trip for a completed dynamic op
  bool waiting_cores = false;
  bool dispatched = false;         // the scheduler has taken the next op
  bool waiting_dispatch = false;   // ... and reaches it at a later time
  int memory_parts = 0;            // transfers of the memory phase still moving (HBM, L2)
  bool output_copying = false;  // the result is on its way back to the host
  bool output_copied = false;
  const Timing* running = nullptr;
  int held_cube = 0;
  int held_vector = 0;
  TimeNs op_start_ns = 0;
  TimeNs launch_start_ns = 0;
};

const char* pool_kind(Unit u) { return u == Unit::kCube || u == Unit::kMix ? "cube" : "vector"; }

std::uint64_t timing_key(std::size_t op, std::uint32_t gear_idx, int cube, int vector, int l2) {
  return (static_cast<std::uint64_t>(op) << 44) | (static_cast<std::uint64_t>(gear_idx) << 32) |
         (static_cast<std::uint64_t>(cube) << 20) | (static_cast<std::uint64_t>(vector) << 8) |
         static_cast<std::uint64_t>(l2 + 1);
}

double nearest_rank(const std::vector<TimeNs>& sorted, double p) {
  if (sorted.empty()) return 0;
  return static_cast<double>(sorted[sim::nearest_rank(sorted.size(), p) - 1]);
}

class CardModel final : public EventTarget {
 public:
  CardModel(const Scenario& sc, const HwSpec& hw, const SimOptions& opt)
      : sc_(sc),
        hw_(hw),
        opt_(opt),
        sim_(sc.info.seed),
        streams_(static_cast<std::size_t>(sc.deployment.streams)),
        cube_(hw.chip.cube_cores, sc.deployment.streams, sc.deployment.cube_cores_per_stream),
        vector_(hw.chip.vector_cores, sc.deployment.streams, sc.deployment.vector_cores_per_stream),
        hbm_(sim_, hw.hbm_bytes_per_us() / 1e3, this, kMemoryDone),
        l2_(sim_, hw.l2_bytes_per_us() / 1e3, this, kL2Done),
        aicpu_(sim_, std::max(1, hw.chip.aicpu_cores), this, kAicpuDone),
        pcie_(sim_, 1, this, kPcieDone),
        pcie_out_(sim_, 1, this, kPcieOutDone),
        anchoring_(sc.graph, hw, opt.measured_hw, sc.deployment.gears) {
    check_fits();
    if (sc.contention.host && hw.host.cores > 0) {
      host_ = std::make_unique<ServerPool>(sim_, hw.host.cores, this, kHostDone);
    }
    if (sc.contention.scheduler) sched_ns_ = us_to_ns(hw.overhead.scheduler_task_us);
    build_ops();
    total_requests_ = sc.workload.warmup_requests + sc.workload.requests;
    if (opt_.trace) {
      for (std::size_t s = 0; s < streams_.size(); ++s) {
        result_.trace_tracks.push_back(fmt::format("stream {} device", s));
        result_.trace_tracks.push_back(fmt::format("stream {} host", s));
      }
      pcie_track_ = static_cast<std::uint32_t>(result_.trace_tracks.size());
      result_.trace_tracks.emplace_back("PCIe input copy");
      pcie_out_track_ = static_cast<std::uint32_t>(result_.trace_tracks.size());
      result_.trace_tracks.emplace_back("PCIe output copy");
      for (const OpInfo& op : ops_) {
        result_.trace_names.push_back(op.name);
      }
      for (const OpInfo& op : ops_) result_.trace_names.push_back("launch " + op.name);
      sync_name_ = static_cast<std::uint32_t>(result_.trace_names.size());
      result_.trace_names.emplace_back("shape sync");
      pcie_name_ = static_cast<std::uint32_t>(result_.trace_names.size());
      result_.trace_names.emplace_back("input copy");
      output_name_ = static_cast<std::uint32_t>(result_.trace_names.size());
      result_.trace_names.emplace_back("output copy");
    }
  }

  SimResult run() {
    begin();
    sim_.run();
    return end();
  }

  // ---- stepwise runs (SimRun) ----------------------------------------------------------------

  void begin() {
    requests_.reserve(static_cast<std::size_t>(total_requests_));
    members_.reserve(static_cast<std::size_t>(total_requests_));
    latencies_.reserve(static_cast<std::size_t>(sc_.workload.requests));
    start_arrivals();
  }
  // Watches the P99 verdict; with `stop` the run pauses for good once it is settled over.
  void watch_p99(bool stop) {
    if (!sc_.target.p99_ms) return;
    watch_.emplace(sc_.workload.requests, *sc_.target.p99_ms);
    stop_when_over_ = stop;
  }
  // Runs until `measured` measured requests completed (a pause, resumed by the next call), the
  // verdict is settled over (when watched with stop), or the run is over.
  void advance(std::int64_t measured) {
    if (measured < 0) stop_when_over_ = false;  // to the end, whatever the verdict
    if (measured >= 0 && measured_done() >= measured) return;
    pause_after_ = measured;
    if (!ended() && !stopped_over()) sim_.run();
  }
  [[nodiscard]] bool ended() const { return sim_.pending_events() == 0; }
  [[nodiscard]] bool stopped_over() const {
    return stop_when_over_ && watch_ && watch_->settled_over();
  }
  [[nodiscard]] const std::optional<P99Watch>& watch() const { return watch_; }
  [[nodiscard]] std::uint64_t events() const { return sim_.stats().events_processed; }
  // The nearest-rank P99 of the measured requests resolved so far: the completed ones and those
  // in flight and already over the target (at their age so far).
  [[nodiscard]] double p99_so_far_ms() const {
    std::vector<TimeNs> v(latencies_);
    if (watch_) watch_->append_over_in_flight(sim_.now(), v);
    if (v.empty()) return 0;
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(sim::nearest_rank(v.size(), 0.99) - 1);
    std::nth_element(v.begin(), at, v.end());
    return static_cast<double>(*at) / 1e6;
  }
  [[nodiscard]] std::int64_t measured_done() const {
    return static_cast<std::int64_t>(latencies_.size());
  }
  // The result: of the whole run once it ended, else of what ran (stopped_early).
  SimResult end() {
    if (ended()) {
      NPUSIM_CHECK(completed_ == total_requests_);
    } else {
      result_.stopped_early = true;
    }
    finish();
    if (result_.stopped_early && stopped_over()) result_.p99_met = false;
    return std::move(result_);
  }

  void on_event(std::uint32_t kind, std::uint64_t payload) override {
    switch (kind) {
      case kArrival:
        on_arrival(payload);
        break;
      case kWindowExpired:
        try_form();
        break;
      case kPcieDone:
        batch_ready(static_cast<std::int64_t>(payload));
        break;
      case kLaunchDone:
        on_launch_done(static_cast<std::size_t>(payload));
        break;
      case kHostOpDone:
        on_host_op_done(static_cast<std::size_t>(payload));
        break;
      case kSyncDone:
        on_sync_done(static_cast<std::size_t>(payload));
        break;
      case kMemoryDone:
      case kL2Done:
        on_memory_done(static_cast<std::size_t>(payload));
        break;
      case kHostDone:
        on_host_done(payload);
        break;
      case kDispatched:
        streams_[payload].waiting_dispatch = false;
        pump_device(static_cast<std::size_t>(payload));
        break;
      case kComputeDone:
      case kAicpuDone:
        on_op_done(static_cast<std::size_t>(payload));
        break;
      case kPcieOutDone:
        on_output_copied(static_cast<std::size_t>(payload));
        break;
      default:
        NPUSIM_CHECK(false);
    }
  }

 private:
  // ---- setup ------------------------------------------------------------------------------

  void check_fits() const {
    const Deployment& d = sc_.deployment;
    if (d.cube_cores_per_stream > hw_.chip.cube_cores) {
      throw InputError(d.cube_limit_pos,
                       fmt::format("[deployment].cube_cores_per_stream: {} exceeds the {} cube "
                                   "cores of {}",
                                   d.cube_cores_per_stream, hw_.chip.cube_cores, hw_.chip.name));
    }
    if (d.vector_cores_per_stream > hw_.chip.vector_cores) {
      throw InputError(
          d.vector_limit_pos,
          fmt::format("[deployment].vector_cores_per_stream: {} exceeds the {} vector "
                      "cores of {}",
                      d.vector_cores_per_stream, hw_.chip.vector_cores, hw_.chip.name));
    }
  }

  void build_ops() {
    const Graph& g = sc_.graph;
    order_ = g.topo_order();
    ops_.resize(g.size());
    descs_.resize(g.size() * sc_.deployment.gears.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      const GraphOp& gop = g.ops()[i];
      const OpDesc d = g.instantiate(i, 1);
      OpInfo& info = ops_[i];
      info.name = gop.text.name;
      if (const auto scale = opt_.device_time_scale.find(d.kind->family);
          scale != opt_.device_time_scale.end()) {
        info.device_scale = scale->second;
      }
      info.type = gop.text.type;
      const Placement p = d.placement.value_or(d.kind->placement);
      switch (p) {
        case Placement::kCube:
          info.unit = Unit::kCube;
          break;
        case Placement::kVector:
          info.unit = Unit::kVector;
          break;
        case Placement::kMix:
          info.unit = Unit::kMix;
          break;
        case Placement::kAicpu:
          info.unit = Unit::kAicpu;
          break;
        case Placement::kHost:
          info.unit = Unit::kHost;
          break;
      }
      try {
        // Dynamic shape as the op model judges it (a host part on a device op is the shape
        // round trip, e.g. Where with one input, Unique), unless the graph says otherwise.
        const bool model_dynamic =
            info.unit != Unit::kHost && d.kind->role == OpRole::kDynamicShape &&
            predict(d, hw_, CoreBudget{}, PredictContext{}).critical_path.host_us > 0;
        info.dynamic = d.attr_bool("dynamic_shape", model_dynamic);
        // The graph engine's core limit does not hold dynamic-shape kernels (they run on
        // logical cores of the whole chip, tuning guide); a graph may mark other ops too.
        info.bypass = info.unit != Unit::kAicpu && info.unit != Unit::kHost &&
                      d.attr_bool("ignores_core_limit", info.dynamic);
        if (!gop.duration_us) {
          // What the model had to guess about this op, said once per op rather than per batch.
          const OpCost c = predict(d, hw_, CoreBudget{}, PredictContext{});
          for (const std::string& w : warning_texts(c.warnings, d.type)) {
            result_.warnings.push_back(fmt::format("graph op '{}': {}", info.name, w));
          }
        }
        const std::string api(d.attr("api").value_or("aclnn"));
        if (api == "aclnn") {
          info.launch_ns = us_to_ns(hw_.host.launch_aclnn_us);
        } else if (api == "aclop") {
          info.launch_ns = us_to_ns(hw_.host.launch_aclop_us);
        } else {
          throw InputError(gop.pos, fmt::format("graph op '{}': attribute api = '{}': expected "
                                                "aclnn or aclop",
                                                info.name, api));
        }
        if (d.attr_bool("recompile", false)) info.launch_ns += us_to_ns(hw_.host.recompile_us);
        info.fixed_us = gop.duration_us;
        const double bd = d.attr_number("block_dim", 1);
        const int pool = info.unit == Unit::kCube || info.unit == Unit::kMix
                             ? hw_.chip.cube_cores
                             : hw_.chip.vector_cores;
        if (bd < 1 || bd != std::floor(bd)) {
          throw InputError(gop.pos, fmt::format("graph op '{}': attribute block_dim = {}: expected "
                                                "a positive integer",
                                                info.name, bd));
        }
        if (bd > pool) {
          // More logical blocks than cores (profiles show kernels launched with 256 blocks on 48
          // cores): the task scheduler runs them in waves on every core of the pool.
          result_.warnings.push_back(fmt::format(
              "graph op '{}': block_dim {} exceeds the {} {} cores of {}; it holds all of them "
              "(its blocks run in waves), or the profile is from a larger chip",
              info.name, bd, pool, pool_kind(info.unit), hw_.chip.name));
        }
        info.fixed_block_dim = static_cast<int>(std::min<double>(bd, pool));
        // The budget the op runs under, for comparing with the measured conditions.
        OpBudget budget;
        budget.uses_cube = info.unit == Unit::kCube || info.unit == Unit::kMix;
        budget.uses_vector = info.unit == Unit::kVector || info.unit == Unit::kMix;
        budget.host = info.unit == Unit::kHost;
        const bool bypass = info.bypass && sc_.contention.core_limit_bypass;
        budget.cube_cores = bypass ? cube_.total() : cube_.cap();
        budget.vector_cores = bypass ? vector_.total() : vector_.cap();
        anchoring_.classify(i, budget, result_.warnings);
      } catch (const InputError& e) {
        if (e.pos().line != 0) throw;
        throw InputError(gop.pos, e.detail());  // attr parse errors carry no position
      }
    }
  }

  const PreparedOp& desc(std::size_t op, std::uint32_t gear_idx) {
    std::optional<PreparedOp>& slot = descs_[op * sc_.deployment.gears.size() + gear_idx];
    if (!slot) slot = sc_.graph.instantiate(op, sc_.deployment.gears[gear_idx]);
    return *slot;
  }

  // The op's timing with `cube` / `vector` cores granted (its budget) and an L2 hit ratio of
  // l2/kL2Buckets (-1: the spec's default). Predicted once per key, then cached.
  const Timing& timing(std::size_t op, std::uint32_t gear_idx, int cube, int vector, int l2) {
    const std::uint64_t key = timing_key(op, gear_idx, cube, vector, l2);
    // A direct-mapped memo in front of the map: an op starts several times per batch with the
    // same few keys, and hashing into the node map was a visible share of each op start.
    MemoEntry& memo = timing_memo_[(key * 0x9E3779B97F4A7C15ULL) >> (64 - kTimingMemoBits)];
    if (memo.timing != nullptr && memo.key == key) return *memo.timing;
    if (const auto it = timings_.find(key); it != timings_.end()) {
      memo = MemoEntry{key, &it->second};
      return it->second;
    }
    const OpInfo& info = ops_[op];
    Timing t;
    const bool anchored = anchoring_.source(op, gear_idx) == TimeSource::kAnchored;
    if (info.fixed_us && !anchored) {
      // A measured time is per wave at its block dim; fewer cores run more waves.
      const int grant = info.unit == Unit::kVector ? vector : cube;
      const int bd = info.fixed_block_dim;
      const int used = std::min(bd, std::max(grant, 1));
      const int waves = (bd + used - 1) / used;
      const TimeNs ns = us_to_ns(*info.fixed_us) * waves;
      if (info.unit == Unit::kHost) {
        t.host_ns = ns;
      } else {
        t.compute_ns = ns;
      }
      if (info.unit == Unit::kCube || info.unit == Unit::kMix) t.cube = used;
      if (info.unit == Unit::kVector) t.vector = used;
      if (info.unit == Unit::kMix) {
        t.vector = std::min(vector, static_cast<int>(std::ceil(used * hw_.cube.mix_vector_ratio)));
      }
    } else {
      PredictContext ctx;
      if (l2 >= 0) ctx.l2_hit_ratio = static_cast<double>(l2) / kL2Buckets;
      const OpCost c = predict(desc(op, gear_idx), hw_, CoreBudget{cube, vector}, ctx);
      const double host_us = c.critical_path.host_us;
      // An anchored op: the model's time here x measured / its time at the measured conditions
      // (in the same L2 context), every part of it scaled alike.
      const double scale = anchored ? anchoring_.factor(op, ctx) : info.device_scale;
      const double device_us = std::max(0.0, c.duration_us - host_us) * scale;
      const double memory_us = std::clamp(c.critical_path.memory_us * scale, 0.0, device_us);
      const TimeNs memory_ns = us_to_ns(memory_us);
      t.bytes_in = c.bytes_in;
      const double hit = ctx.l2_hit_ratio >= 0 ? ctx.l2_hit_ratio : hw_.memory.l2_hit_ratio_default;
      if (info.unit == Unit::kHost) {
        t.host_ns = us_to_ns(c.duration_us * (anchored ? scale : 1.0));
      } else {
        t.memory_ns = memory_ns;
        t.compute_ns = us_to_ns(device_us) - memory_ns;
        // What goes through HBM: reads that miss L2 and all writes (the op model's chip
        // bandwidth term), capped at what HBM carries in the memory phase so a lone op keeps
        // exactly its predicted time.
        // (in read-equivalent bytes: the write factor and turnaround as in the op model)
        t.hbm_bytes = std::min(hw_.hbm_bus_bytes(c.bytes_in * (1 - hit), c.bytes_out),
                               capacity_bytes_per_ns() * static_cast<double>(memory_ns));
        // Every byte read or written passes the chip's L2 (the op model caps a lone op there);
        // capped the same way so that alone the transfer ends with the memory phase.
        t.l2_bytes = std::min(c.bytes_in + c.bytes_out,
                              hw_.l2_bytes_per_us() / 1e3 * static_cast<double>(memory_ns));
      }
      const int bd = std::max(1, c.block_dim);
      if (info.unit == Unit::kCube || info.unit == Unit::kMix) t.cube = std::min(bd, cube);
      if (info.unit == Unit::kVector) t.vector = std::min(bd, vector);
      if (info.unit == Unit::kMix) {
        t.vector =
            std::min(vector, static_cast<int>(std::ceil(t.cube * hw_.cube.mix_vector_ratio)));
      }
    }
    const Timing& stored = timings_.emplace(key, t).first->second;
    memo = MemoEntry{key, &stored};
    return stored;
  }

  [[nodiscard]] double capacity_bytes_per_ns() const { return hw_.hbm_bytes_per_us() / 1e3; }

  // One copy over one direction of the PCIe link: latency + bytes at the achievable rate.
  [[nodiscard]] TimeNs pcie_ns(double bytes) const {
    return us_to_ns(hw_.pcie.latency_us +
                    bytes / (hw_.pcie.bandwidth_gbps * hw_.pcie.efficiency * 1e3));
  }

  // The L2 model. Between batches a stream re-reads the same weights and tables, and each op
  // reads what the op before it just wrote, so a stream's reads stay in L2 as long as the
  // working sets of all streams running a batch fit: the hit ratio is
  // min(1, L2 bytes / sum of the running streams' working sets), where a stream's working set is
  // the bytes its graph reads per batch at its gear. More streams -> more working sets -> they
  // flush each other's lines, and memory-bound ops slow down. Quantised down to 1/kL2Buckets.
  double graph_working_set(std::uint32_t gi) {
    if (graph_ws_.empty()) graph_ws_.assign(sc_.deployment.gears.size(), -1.0);
    double& ws = graph_ws_[gi];
    if (ws < 0) {
      ws = 0;
      for (std::size_t op = 0; op < ops_.size(); ++op) {
        if (ops_[op].unit == Unit::kHost || ops_[op].unit == Unit::kAicpu) continue;
        ws += timing(op, gi, cube_.cap(), vector_.cap(), kL2Buckets).bytes_in;
      }
    }
    return ws;
  }

  [[nodiscard]] int l2_bucket() const {
    if (active_ws_ <= hw_.chip.l2_bytes) return kL2Buckets;
    return static_cast<int>(std::floor(hw_.chip.l2_bytes / active_ws_ * kL2Buckets));
  }

  // ---- arrivals and batching -------------------------------------------------------------

  void start_arrivals() {
    const Workload& w = sc_.workload;
    switch (w.arrival) {
      case ArrivalKind::kPoisson:
        sim_.schedule_at(us_to_ns(sim_.exponential(1e6 / w.rate_qps)), this, kArrival, 0,
                         kPrioArrival);
        break;
      case ArrivalKind::kClosed:
        for (std::int64_t c = 0; c < std::min<std::int64_t>(w.concurrency, total_requests_); ++c) {
          sim_.schedule_at(0, this, kArrival, 0, kPrioArrival);
          ++arrivals_scheduled_;
        }
        break;
      case ArrivalKind::kTrace:
        sim_.schedule_at(w.trace.front().arrival_ns, this, kArrival, 0, kPrioArrival);
        break;
    }
  }

  void on_arrival(std::uint64_t /*payload*/) {
    const Workload& w = sc_.workload;
    const auto id = static_cast<std::int64_t>(requests_.size());
    NPUSIM_CHECK(id < total_requests_);
    Request r;
    r.arrival_ns = sim_.now();
    if (w.arrival == ArrivalKind::kTrace && w.trace[static_cast<std::size_t>(id)].batch_size > 0) {
      r.samples = w.trace[static_cast<std::size_t>(id)].batch_size;
    } else {
      r.samples = w.batch_size.draw(sim_.uniform01());
    }
    requests_.push_back(r);
    if (id == w.warmup_requests) start_measuring();
    if (watch_ && id >= w.warmup_requests) {
      watch_->arrived(sim_.now());
      watch_->age(sim_.now());
      if (stopped_over()) sim_.stop();
    }
    in_system_.add(sim_.now(), 1);

    // The next arrival of an open workload.
    if (id + 1 < total_requests_) {
      if (w.arrival == ArrivalKind::kPoisson) {
        sim_.schedule_in(us_to_ns(sim_.exponential(1e6 / w.rate_qps)), this, kArrival, 0,
                         kPrioArrival);
      } else if (w.arrival == ArrivalKind::kTrace) {
        sim_.schedule_at(w.trace[static_cast<std::size_t>(id + 1)].arrival_ns, this, kArrival, 0,
                         kPrioArrival);
      }
    }
    route(static_cast<std::uint32_t>(id));
  }

  void route(std::uint32_t id) {
    Request& r = requests_[id];
    const std::int64_t max_gear = sc_.deployment.gears.back();
    if (r.samples > max_gear) {
      // Oversize: chunks of the largest gear, each its own batch, run in parallel on streams.
      std::int64_t left = r.samples;
      r.chunks_left = static_cast<std::int32_t>((left + max_gear - 1) / max_gear);
      while (left > 0) {
        const std::int64_t chunk = std::min(left, max_gear);
        left -= chunk;
        const std::int64_t b = new_batch();
        // A chunk carries its request itself rather than through members_.
        batches_[static_cast<std::size_t>(b)].chunk_of = id;
        batches_[static_cast<std::size_t>(b)].samples = chunk;
        dispatch(b);
      }
      return;
    }
    r.chunks_left = 1;
    pending_.push_back(id);
    pending_samples_ += r.samples;
    try_form();
  }

  // The batcher (dynamic batching as serving front ends do it): waiting requests are taken
  // first come, first served into a batch of at most the largest gear. A full batch is formed at
  // once; a partial one only when a stream is free to run it, and then only once the oldest
  // waiting request has waited batch_window_us (0: at once). While every stream is busy,
  // requests keep gathering, so a loaded card runs fuller batches.
  void try_form() {
    const std::int64_t max_gear = sc_.deployment.gears.back();
    while (pending_samples_ >= max_gear) form();
    while (!pending_.empty() && idle_streams_ > in_flight_) {
      const TimeNs deadline = requests_[pending_.front()].arrival_ns + window_ns_;
      if (sim_.now() < deadline) {
        if (!sim_.pending(window_) || window_at_ != deadline) {
          sim_.cancel(window_);
          window_ = sim_.schedule_at(deadline, this, kWindowExpired, 0, kPrioArrival);
          window_at_ = deadline;
        }
        return;
      }
      form();
    }
  }

  void form() {
    const std::int64_t max_gear = sc_.deployment.gears.back();
    const std::int64_t b = new_batch();
    while (!pending_.empty()) {
      const std::uint32_t id = pending_.front();
      const std::int64_t n = requests_[id].samples;
      if (batches_[static_cast<std::size_t>(b)].samples + n > max_gear) break;
      pending_.pop_front();
      pending_samples_ -= n;
      add_member(b, id, n);
    }
    NPUSIM_CHECK(batches_[static_cast<std::size_t>(b)].member_count > 0);
    dispatch(b);
  }

  std::int64_t new_batch() {
    Batch b;
    b.first_member = static_cast<std::uint32_t>(members_.size());
    batches_.push_back(b);
    return static_cast<std::int64_t>(batches_.size()) - 1;
  }

  void add_member(std::int64_t b, std::uint32_t id, std::int64_t samples) {
    Batch& batch = batches_[static_cast<std::size_t>(b)];
    NPUSIM_CHECK(batch.first_member + batch.member_count == members_.size());
    members_.push_back(id);
    ++batch.member_count;
    batch.samples += samples;
  }

  // Pads to the next gear, copies the input over PCIe, then queues the batch for a stream.
  void dispatch(std::int64_t b) {
    ++in_flight_;
    Batch& batch = batches_[static_cast<std::size_t>(b)];
    const auto& gears = sc_.deployment.gears;
    const auto g = std::lower_bound(gears.begin(), gears.end(), batch.samples);
    NPUSIM_CHECK(g != gears.end());
    batch.gear = *g;
    batch.gear_idx = static_cast<std::uint32_t>(g - gears.begin());
    const double bytes = sc_.workload.input_bytes_per_sample * static_cast<double>(batch.gear);
    if (bytes > 0) {
      const TimeNs ns = pcie_ns(bytes);
      if (opt_.trace) pcie_spans_pending_.push_back({b, ns});
      pcie_.submit(ns, static_cast<std::uint64_t>(b));
    } else {
      batch_ready(b);
    }
  }

  void batch_ready(std::int64_t b) {
    if (opt_.trace && !pcie_spans_pending_.empty() && pcie_spans_pending_.front().first == b) {
      const TimeNs d = pcie_spans_pending_.front().second;
      pcie_spans_pending_.pop_front();
      span(pcie_track_, pcie_name_, sim_.now() - d, d, b);
    }
    for (std::size_t s = 0; s < streams_.size(); ++s) {
      if (streams_[s].batch < 0) {
        start_batch(s, b);
        return;
      }
    }
    ready_.push_back(b);
  }

  // ---- one stream: host dispatch and the in-order device queue ---------------------------

  void start_batch(std::size_t s, std::int64_t b) {
    Stream& st = streams_[s];
    st = Stream{};
    st.batch = b;
    --idle_streams_;
    --in_flight_;
    batches_[static_cast<std::size_t>(b)].start_ns = sim_.now();
    active_ws_ += graph_working_set(batches_[static_cast<std::size_t>(b)].gear_idx);
    streams_busy_.add(sim_.now(), 1);
    pump_host(s);
  }

  void pump_host(std::size_t s) {
    Stream& st = streams_[s];
    if (st.host_busy) return;
    if (st.sync_pending) {
      // The shape round trip of a finished dynamic op: device -> host -> device.
      st.host_busy = true;
      st.launch_start_ns = sim_.now();
      run_on_host(s, us_to_ns(hw_.host.dynamic_shape_sync_us), kSync);
      return;
    }
    const auto n = static_cast<std::uint32_t>(order_.size());
    if (st.launched == n || st.barrier) return;
    if (st.launched - st.completed >=
        static_cast<std::uint32_t>(std::max(1, hw_.host.launch_queue_depth)))
      return;
    const std::size_t op = order_[st.launched];
    const Batch& batch = batches_[static_cast<std::size_t>(st.batch)];
    if (ops_[op].unit == Unit::kHost) {
      // A host op needs its inputs: it runs when the device has drained.
      if (st.completed != st.launched) return;
      const Timing& t = timing(op, batch.gear_idx, cube_.cap(), vector_.cap(), -1);
      st.host_busy = true;
      st.launch_start_ns = sim_.now();
      run_on_host(s, t.host_ns, kHostOp);
      return;
    }
    st.host_busy = true;
    st.launch_start_ns = sim_.now();
    run_on_host(s, ops_[op].launch_ns, kLaunch);
  }

  // A stream's host work: on its own thread, or queued FIFO with every stream's on the card's
  // shared host cores ([host].cores) when that contention is on.
  void run_on_host(std::size_t s, TimeNs ns, HostWork what) {
    if (host_) {
      host_->submit(ns, s * kHostWorkKinds + what);
      return;
    }
    static constexpr std::uint32_t kDone[] = {kLaunchDone, kHostOpDone, kSyncDone};
    sim_.schedule_in(ns, this, kDone[what], s, kPrioCompletion);
  }

  void on_host_done(std::uint64_t tag) {
    const auto s = static_cast<std::size_t>(tag / kHostWorkKinds);
    switch (tag % kHostWorkKinds) {
      case kLaunch:
        on_launch_done(s);
        break;
      case kHostOp:
        on_host_op_done(s);
        break;
      default:
        on_sync_done(s);
        break;
    }
  }

  void on_launch_done(std::size_t s) {
    Stream& st = streams_[s];
    st.host_busy = false;
    const std::size_t op = order_[st.launched];
    span(host_track(s), static_cast<std::uint32_t>(ops_.size() + op), st.launch_start_ns,
         sim_.now() - st.launch_start_ns, st.batch);
    ++st.launched;
    if (ops_[op].dynamic) st.barrier = true;
    pump_device(s);
    pump_host(s);
  }

  void on_host_op_done(std::size_t s) {
    Stream& st = streams_[s];
    st.host_busy = false;
    const std::size_t op = order_[st.launched];
    span(host_track(s), static_cast<std::uint32_t>(op), st.launch_start_ns,
         sim_.now() - st.launch_start_ns, st.batch);
    account_op(op, batch_gear(st), sim_.now() - st.launch_start_ns);
    ++st.launched;
    ++st.completed;
    if (!maybe_finish_batch(s)) pump_host(s);
  }

  void on_sync_done(std::size_t s) {
    Stream& st = streams_[s];
    st.host_busy = false;
    st.sync_pending = false;
    st.barrier = false;
    span(host_track(s), sync_name_, st.launch_start_ns, sim_.now() - st.launch_start_ns, st.batch);
    if (!maybe_finish_batch(s)) pump_host(s);
  }

  void pump_device(std::size_t s) {
    Stream& st = streams_[s];
    if (st.device_busy || st.waiting_cores || st.waiting_dispatch || st.completed == st.launched)
      return;
    if (sched_ns_ > 0 && !st.dispatched) {
      // The card's one task scheduler takes kernels first come, first served, each for
      // sched_ns_. Its work on a kernel is part of that kernel's head (the op model's launch
      // cost), so an op waits only while the scheduler serves earlier ones.
      const TimeNs now = sim_.now();
      const TimeNs start = std::max(now, sched_free_ns_);
      sched_free_ns_ = start + sched_ns_;
      if (measuring_) sched_busy_ns_ += static_cast<double>(sched_ns_);
      st.dispatched = true;
      if (start > now) {
        st.waiting_dispatch = true;
        sim_.schedule_at(start, this, kDispatched, s, kPrioCompletion);
        return;
      }
    }
    const std::size_t op = order_[st.completed];
    const OpInfo& info = ops_[op];
    const std::uint32_t gi = batches_[static_cast<std::size_t>(st.batch)].gear_idx;
    if (info.unit == Unit::kAicpu) {
      const Timing& t = timing(op, gi, cube_.cap(), vector_.cap(), -1);
      st.device_busy = true;
      st.running = &t;
      st.op_start_ns = sim_.now();
      device_busy_.add(sim_.now(), 1);
      aicpu_.submit(t.compute_ns + t.memory_ns, s);
      return;
    }
    if (!try_start_on_cores(s)) {
      st.waiting_cores = true;
      core_waiters_.push_back(s);
    }
  }

  // Takes what the op wants, or fewer cores when fewer are free (then it runs more waves: the
  // timing at the smaller budget). With no core free at all it waits.
  bool try_start_on_cores(std::size_t s) {
    Stream& st = streams_[s];
    const std::size_t op = order_[st.completed];
    const std::uint32_t gi = batches_[static_cast<std::size_t>(st.batch)].gear_idx;
    const int si = static_cast<int>(s);
    const int l2 = l2_bucket();
    // An op that ignores the core limit is planned for the whole chip and takes any free core,
    // also those of other streams' shares.
    const bool bypass = ops_[op].bypass && sc_.contention.core_limit_bypass;
    const int cube_budget = bypass ? cube_.total() : cube_.cap();
    const int vector_budget = bypass ? vector_.total() : vector_.cap();
    const Timing* want = &timing(op, gi, cube_budget, vector_budget, l2);
    const int gc = want->cube > 0 ? cube_.grantable(si, want->cube, bypass) : 0;
    const int gv = want->vector > 0 ? vector_.grantable(si, want->vector, bypass) : 0;
    if ((want->cube > 0 && gc == 0) || (want->vector > 0 && gv == 0)) return false;
    const Timing* t = want;
    if (gc < want->cube || gv < want->vector) {
      t = &timing(op, gi, want->cube > 0 ? gc : cube_budget, want->vector > 0 ? gv : vector_budget,
                  l2);
    }
    const TimeNs now = sim_.now();
    cube_.acquire(si, t->cube, now, bypass);
    vector_.acquire(si, t->vector, now, bypass);
    cores_sample(now);
    st.held_cube = t->cube;
    st.held_vector = t->vector;
    st.device_busy = true;
    st.running = t;
    st.op_start_ns = now;
    device_busy_.add(now, 1);
    // The memory phase moves its bytes through HBM and L2, each shared with the other streams'
    // ops as a fluid; it ends when both transfers have.
    const bool via_hbm = t->memory_ns > 0 && t->hbm_bytes > 0;
    const bool via_l2 = sc_.contention.l2_bandwidth && t->memory_ns > 0 && t->l2_bytes > 0;
    st.memory_parts = (via_hbm ? 1 : 0) + (via_l2 ? 1 : 0);
    if (via_hbm) hbm_.start(t->hbm_bytes, t->hbm_bytes / static_cast<double>(t->memory_ns), s);
    if (via_l2) l2_.start(t->l2_bytes, t->l2_bytes / static_cast<double>(t->memory_ns), s);
    if (st.memory_parts == 0) {
      sim_.schedule_in(t->memory_ns + t->compute_ns, this, kComputeDone, s, kPrioCompletion);
    }
    return true;
  }

  void on_memory_done(std::size_t s) {
    Stream& st = streams_[s];
    NPUSIM_CHECK(st.memory_parts > 0);
    if (--st.memory_parts > 0) return;
    sim_.schedule_in(st.running->compute_ns, this, kComputeDone, s, kPrioCompletion);
  }

  void on_op_done(std::size_t s) {
    Stream& st = streams_[s];
    const std::size_t op = order_[st.completed];
    const TimeNs now = sim_.now();
    if (st.held_cube > 0 || st.held_vector > 0) {
      cube_.release(static_cast<int>(s), st.held_cube, now);
      vector_.release(static_cast<int>(s), st.held_vector, now);
      cores_sample(now);
      st.held_cube = 0;
      st.held_vector = 0;
    }
    st.device_busy = false;
    st.dispatched = false;
    device_busy_.add(now, -1);
    span(device_track(s), static_cast<std::uint32_t>(op), st.op_start_ns, now - st.op_start_ns,
         st.batch);
    account_op(op, batch_gear(st), now - st.op_start_ns);
    ++st.completed;
    if (ops_[op].dynamic) st.sync_pending = true;
    wake_core_waiters();
    if (!maybe_finish_batch(s)) {
      pump_device(s);
      pump_host(s);
    }
  }

  void wake_core_waiters() {
    // FIFO: the longest waiter first; stop at the first that still cannot start so a big op is
    // not starved by small ones behind it.
    while (!core_waiters_.empty()) {
      const std::size_t w = core_waiters_.front();
      if (!try_start_on_cores(w)) break;
      streams_[w].waiting_cores = false;
      core_waiters_.pop_front();
    }
  }

  void on_output_copied(std::size_t s) {
    Stream& st = streams_[s];
    const Batch& batch = batches_[static_cast<std::size_t>(st.batch)];
    // The link serves copies in order, so this one ran for the last `ns` before now.
    const TimeNs ns =
        pcie_ns(sc_.workload.output_bytes_per_sample * static_cast<double>(batch.gear));
    span(pcie_out_track_, output_name_, sim_.now() - ns, ns, st.batch);
    st.output_copied = true;
    (void)maybe_finish_batch(s);
  }

  bool maybe_finish_batch(std::size_t s) {
    Stream& st = streams_[s];
    if (st.completed != order_.size() || st.sync_pending || st.host_busy) return false;
    const std::int64_t b = st.batch;
    const Batch& batch = batches_[static_cast<std::size_t>(b)];
    const TimeNs now = sim_.now();
    // The instance copies the result back before it answers and takes the next batch.
    const double out_bytes = sc_.workload.output_bytes_per_sample * static_cast<double>(batch.gear);
    if (out_bytes > 0 && !st.output_copied) {
      if (!st.output_copying) {
        st.output_copying = true;
        const TimeNs ns = pcie_ns(out_bytes);
        pcie_out_.submit(ns, s);
      }
      return false;
    }
    streams_busy_.add(now, -1);
    active_ws_ -= graph_working_set(batch.gear_idx);
    if (active_ws_ < 0.5) active_ws_ = 0;  // absorb rounding of the running sum
    st.batch = -1;
    batch_samples_ += batch.samples;
    batch_gears_ += batch.gear;
    ++batches_done_;
    auto finish_request = [&](std::uint32_t id) {
      Request& r = requests_[id];
      r.service_ns = now - batch.start_ns;
      NPUSIM_CHECK(r.chunks_left > 0);  // a request completes exactly once
      if (--r.chunks_left == 0) complete(id);
    };
    if (batch.chunk_of >= 0) finish_request(static_cast<std::uint32_t>(batch.chunk_of));
    for (std::uint32_t m = 0; m < batch.member_count; ++m) {
      finish_request(members_[batch.first_member + m]);
    }
    ++idle_streams_;
    if (!ready_.empty()) {
      const std::int64_t next = ready_.front();
      ready_.pop_front();
      start_batch(s, next);
    } else {
      try_form();  // requests that gathered while every stream was busy
    }
    return true;
  }

  void complete(std::uint32_t id) {
    const Request& r = requests_[id];
    const TimeNs now = sim_.now();
    in_system_.add(now, -1);
    ++completed_;
    if (measuring_) {
      ++window_completions_;
      window_samples_ += r.samples;
    }
    if (static_cast<std::int64_t>(id) >= sc_.workload.warmup_requests) {
      latencies_.push_back(now - r.arrival_ns);
      service_sum_ns_ += static_cast<double>(r.service_ns);
      service_sq_sum_ns2_ += static_cast<double>(r.service_ns) * static_cast<double>(r.service_ns);
      service_min_ns_ = std::min(service_min_ns_, r.service_ns);
      service_max_ns_ = std::max(service_max_ns_, r.service_ns);
      measured_samples_ += r.samples;
      if (r.samples > sc_.deployment.gears.back()) ++split_;
      if (static_cast<std::int64_t>(latencies_.size()) == sc_.workload.requests) snapshot();
      if (watch_) {
        watch_->completed(static_cast<std::int64_t>(id) - sc_.workload.warmup_requests,
                          latencies_.back());
        watch_->age(now);
        if (stopped_over()) sim_.stop();
      }
      if (static_cast<std::int64_t>(latencies_.size()) == pause_after_) sim_.stop();
    }
    // Closed loop: the client whose request completed sends its next one now (no think time).
    if (sc_.workload.arrival == ArrivalKind::kClosed && arrivals_scheduled_ < total_requests_) {
      sim_.schedule_in(0, this, kArrival, 0, kPrioArrival);
      ++arrivals_scheduled_;
    }
  }

  // ---- metrics ---------------------------------------------------------------------------

  void start_measuring() {
    const TimeNs now = sim_.now();
    measure_start_ns_ = now;
    measuring_ = true;
    cube_.busy().restart(now);
    vector_.busy().restart(now);
    aicpu_.busy_time().restart(now);
    pcie_.busy_time().restart(now);
    pcie_out_.busy_time().restart(now);
    if (host_) host_->busy_time().restart(now);
    sched_busy_ns_ = 0;
    in_system_.restart(now);
    device_busy_.restart(now);
    streams_busy_.restart(now);
    hbm_bytes_at_start_ = hbm_.bytes_moved();
  }

  // Called when the last measured request completes: the window ends here.
  void snapshot() {
    const TimeNs now = sim_.now();
    end_ns_ = now;
    const double span_ns = static_cast<double>(now - measure_start_ns_);
    result_.window_s = span_ns / 1e9;
    result_.cube_utilization =
        hw_.chip.cube_cores > 0 ? cube_.busy().area(now) / (span_ns * hw_.chip.cube_cores) : 0;
    result_.vector_utilization = hw_.chip.vector_cores > 0
                                     ? vector_.busy().area(now) / (span_ns * hw_.chip.vector_cores)
                                     : 0;
    result_.aicpu_utilization =
        aicpu_.busy_time().area(now) / (span_ns * std::max(1, hw_.chip.aicpu_cores));
    result_.pcie_utilization = pcie_.busy_time().area(now) / span_ns;
    result_.pcie_out_utilization = pcie_out_.busy_time().area(now) / span_ns;
    if (host_) result_.host_utilization = host_->busy_time().area(now) / (span_ns * hw_.host.cores);
    // (a kernel's scheduler time is counted when it is taken, so the share can pass 1 by a few
    // kernels' worth at the window's end; clamp)
    result_.scheduler_utilization = std::min(1.0, sched_busy_ns_ / span_ns);
    result_.in_system_mean = in_system_.area(now) / span_ns;
    const double stream_busy = streams_busy_.area(now);
    result_.device_idle_share = stream_busy > 0 ? 1.0 - device_busy_.area(now) / stream_busy : 0;
    result_.hbm_bytes_per_us = (hbm_.bytes_moved() - hbm_bytes_at_start_) / (span_ns / 1e3);
    measuring_ = false;
  }

  [[nodiscard]] std::uint32_t batch_gear(const Stream& st) const {
    return batches_[static_cast<std::size_t>(st.batch)].gear_idx;
  }

  void account_op(std::size_t op, std::uint32_t gear_idx, TimeNs ns) {
    if (!measuring_) return;
    op_ns_[op] += ns;
    ++op_count_[op];
    switch (anchoring_.source(op, gear_idx)) {
      case TimeSource::kMeasured:
        ++result_.execution_sources.measured;
        break;
      case TimeSource::kAnchored:
        ++op_anchored_[op];
        ++result_.execution_sources.anchored;
        break;
      case TimeSource::kPredicted:
        ++result_.execution_sources.predicted;
        break;
    }
  }

  void span(std::uint32_t track, std::uint32_t name, TimeNs start, TimeNs dur, std::int64_t batch) {
    if (!opt_.trace || result_.trace.size() >= opt_.trace_max_spans) return;
    result_.trace.push_back(TraceSpan{track, name, start, dur, batch});
  }
  void cores_sample(TimeNs now) {
    if (!opt_.trace || result_.trace.size() >= opt_.trace_max_spans) return;
    const TraceCores c{now, cube_.total() - cube_.free(), vector_.total() - vector_.free()};
    // several changes at one instant: keep the last
    if (!result_.trace_cores.empty() && result_.trace_cores.back().at_ns == now) {
      result_.trace_cores.back() = c;
    } else {
      result_.trace_cores.push_back(c);
    }
  }
  [[nodiscard]] std::uint32_t device_track(std::size_t s) const {
    return static_cast<std::uint32_t>(2 * s);
  }
  [[nodiscard]] std::uint32_t host_track(std::size_t s) const {
    return static_cast<std::uint32_t>(2 * s + 1);
  }

  void finish() {
    SimResult& r = result_;
    r.scenario = sc_.info.name;
    r.hw = hw_.chip.name;
    r.seed = sc_.info.seed;
    r.streams = sc_.deployment.streams;
    r.requests = static_cast<std::int64_t>(latencies_.size());
    r.warmup_requests = sc_.workload.warmup_requests;
    r.samples = measured_samples_;
    r.batches = batches_done_;
    r.split_requests = split_;
    r.mean_batch_samples =
        batches_done_ > 0 ? static_cast<double>(batch_samples_) / static_cast<double>(batches_done_)
                          : 0;
    r.mean_gear = batches_done_ > 0
                      ? static_cast<double>(batch_gears_) / static_cast<double>(batches_done_)
                      : 0;
    // Rates count every completion inside the window: when the card is saturated, warm-up
    // requests still finish inside it, and leaving them out would understate its capacity.
    r.window_completions = window_completions_;
    r.qps = r.window_s > 0 ? static_cast<double>(window_completions_) / r.window_s : 0;
    r.throughput = r.window_s > 0 ? static_cast<double>(window_samples_) / r.window_s : 0;
    double sum = 0;
    double queue_sum = 0;
    for (std::size_t i = 0; i < latencies_.size(); ++i) sum += static_cast<double>(latencies_[i]);
    queue_sum = sum - service_sum_ns_;
    const double n = std::max<double>(1.0, static_cast<double>(latencies_.size()));
    std::sort(latencies_.begin(), latencies_.end());
    r.latency.mean_ms = sum / n / 1e6;
    r.latency.p50_ms = nearest_rank(latencies_, 0.50) / 1e6;
    r.latency.p90_ms = nearest_rank(latencies_, 0.90) / 1e6;
    r.latency.p99_ms = nearest_rank(latencies_, 0.99) / 1e6;
    r.latency.p999_ms = nearest_rank(latencies_, 0.999) / 1e6;
    r.latency.max_ms = latencies_.empty() ? 0 : static_cast<double>(latencies_.back()) / 1e6;
    r.queue_ms_mean = queue_sum / n / 1e6;
    r.service_ms_mean = service_sum_ns_ / n / 1e6;
    r.service_ms_sd =
        std::sqrt(std::max(0.0, service_sq_sum_ns2_ / n - (service_sum_ns_ / n) * (service_sum_ns_ / n))) /
        1e6;
    r.service_ms_min = latencies_.empty() ? 0 : static_cast<double>(service_min_ns_) / 1e6;
    r.service_ms_max = static_cast<double>(service_max_ns_) / 1e6;
    if (sc_.target.traffic_qps && r.qps > 0) {
      r.cards_needed = static_cast<std::int64_t>(std::ceil(*sc_.target.traffic_qps / r.qps - 1e-9));
    }
    if (sc_.target.p99_ms) r.p99_met = r.latency.p99_ms <= *sc_.target.p99_ms;
    double total_ns = 0;
    for (const TimeNs t : op_ns_) total_ns += static_cast<double>(t);
    for (const std::size_t op : order_) {
      OpStats o;
      o.name = ops_[op].name;
      o.type = ops_[op].type;
      o.executions = op_count_[op];
      o.device_us = static_cast<double>(op_ns_[op]) / 1e3;
      o.share = total_ns > 0 ? static_cast<double>(op_ns_[op]) / total_ns : 0;
      o.mean_us = o.executions > 0 ? o.device_us / static_cast<double>(o.executions) : 0;
      // Measured at every gear it ran at, anchored at any, or never measured (the source does
      // not depend on the gear for a graph without a measurement).
      if (!sc_.graph.ops()[op].duration_us) {
        o.source = "predicted";
        ++r.op_sources.predicted;
      } else if (op_anchored_[op] > 0 ||
                 (op_count_[op] == 0 && anchoring_.source(op, 0) == TimeSource::kAnchored)) {
        o.source = "anchored";
        ++r.op_sources.anchored;
      } else {
        o.source = "measured";
        ++r.op_sources.measured;
      }
      r.ops.push_back(std::move(o));
    }
    r.events = sim_.stats().events_processed;
  }

  // ---- state -----------------------------------------------------------------------------

  const Scenario& sc_;
  const HwSpec& hw_;
  SimOptions opt_;
  std::optional<P99Watch> watch_;  // SimRun: the early P99 verdict
  bool stop_when_over_ = false;
  std::int64_t pause_after_ = -1;  // SimRun: pause once this many measured requests completed
  Simulator sim_;
  std::vector<OpInfo> ops_;
  std::vector<std::size_t> order_;
  std::vector<std::optional<PreparedOp>> descs_;
  std::unordered_map<std::uint64_t, Timing> timings_;  // node-based: references stay valid
  struct MemoEntry {
    std::uint64_t key = 0;
    const Timing* timing = nullptr;
  };
  static constexpr int kTimingMemoBits = 10;
  std::vector<MemoEntry> timing_memo_ = std::vector<MemoEntry>(std::size_t{1} << kTimingMemoBits);
  std::vector<Stream> streams_;
  CorePool cube_;
  CorePool vector_;
  FluidBandwidth hbm_;
  FluidBandwidth l2_;
  std::unique_ptr<ServerPool> host_;  // the shared host cores, when that contention is on
  TimeNs sched_ns_ = 0;               // the task scheduler's time per kernel (0: no limit)
  TimeNs sched_free_ns_ = 0;          // when it is free for the next kernel
  double sched_busy_ns_ = 0;          // its busy time inside the measured window
  ServerPool aicpu_;
  ServerPool pcie_;
  ServerPool pcie_out_;
  Anchoring anchoring_;  // which ops run measured, anchored or predicted
  std::deque<std::size_t> core_waiters_;
  std::deque<std::int64_t> ready_;
  std::vector<Request> requests_;
  std::vector<Batch> batches_;
  std::vector<std::uint32_t> members_;
  std::deque<std::uint32_t> pending_;  // requests waiting for the batcher, FIFO
  std::int64_t pending_samples_ = 0;
  TimeNs window_ns_ = us_to_ns(sc_.deployment.batch_window_us);
  EventHandle window_;
  TimeNs window_at_ = 0;
  int idle_streams_ = sc_.deployment.streams;
  int in_flight_ = 0;  // batches formed but not yet started (copying in, or in ready_)
  std::int64_t total_requests_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t arrivals_scheduled_ = 0;  // closed loop: requests already promised
  std::vector<double> graph_ws_;         // per gear: bytes one batch's ops read (-1 = not computed)
  double active_ws_ = 0;                 // sum of graph_ws_ over the streams running a batch

  bool measuring_ = false;
  TimeNs measure_start_ns_ = 0;
  TimeNs end_ns_ = 0;
  TimeWeighted in_system_;
  TimeWeighted device_busy_;
  TimeWeighted streams_busy_;
  double hbm_bytes_at_start_ = 0;
  std::vector<TimeNs> latencies_;
  double service_sum_ns_ = 0;
  double service_sq_sum_ns2_ = 0;
  TimeNs service_min_ns_ = kTimeNever;
  TimeNs service_max_ns_ = 0;
  std::int64_t measured_samples_ = 0;
  std::int64_t window_completions_ = 0;  // any request, warm-up or not, completed in the window
  std::int64_t window_samples_ = 0;
  std::int64_t split_ = 0;
  std::int64_t batch_samples_ = 0;
  std::int64_t batch_gears_ = 0;
  std::int64_t batches_done_ = 0;
  std::vector<TimeNs> op_ns_ = std::vector<TimeNs>(sc_.graph.size(), 0);
  std::vector<std::int64_t> op_count_ = std::vector<std::int64_t>(sc_.graph.size(), 0);
  std::vector<std::int64_t> op_anchored_ = std::vector<std::int64_t>(sc_.graph.size(), 0);

  std::uint32_t pcie_track_ = 0;
  std::uint32_t pcie_out_track_ = 0;
  std::uint32_t output_name_ = 0;
  std::uint32_t sync_name_ = 0;
  std::uint32_t pcie_name_ = 0;
  std::deque<std::pair<std::int64_t, TimeNs>> pcie_spans_pending_;
  SimResult result_;
};

}  // namespace

void check_scenario_fits(const Scenario& scenario, const HwSpec& hw) {
  // Building the model runs every load-time check; nothing is scheduled until run().
  const auto model = std::make_unique<CardModel>(scenario, hw, SimOptions{});
}

std::string check_scenario_file(const std::filesystem::path& file,
                                const std::vector<std::filesystem::path>& hw_dirs) {
  const Scenario sc = load_scenario(file);
  const HwSpec hw = load_scenario_hw(sc, hw_dirs);
  check_scenario_fits(sc, hw);
  return fmt::format("scenario {}: {} ops on {}, {} stream(s), {} gear(s) up to {}, {} arrivals",
                     sc.info.name, sc.graph.size(), hw.chip.name, sc.deployment.streams,
                     sc.deployment.gears.size(), sc.deployment.gears.back(),
                     arrival_name(sc.workload.arrival));
}

SimResult simulate(const Scenario& scenario, const HwSpec& hw, const SimOptions& options) {
  auto model = std::make_unique<CardModel>(scenario, hw, options);
  return model->run();
}

struct SimRun::Impl {
  Scenario scenario;  // the model keeps a reference: it lives here, at a fixed address
  std::unique_ptr<CardModel> model;
};

SimRun::SimRun(Scenario scenario, const HwSpec& hw, bool stop_when_over,
               const SimOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->scenario = std::move(scenario);
  impl_->model = std::make_unique<CardModel>(impl_->scenario, hw, options);
  impl_->model->watch_p99(stop_when_over);
  impl_->model->begin();
}

SimRun::~SimRun() = default;
SimRun::SimRun(SimRun&&) noexcept = default;
SimRun& SimRun::operator=(SimRun&&) noexcept = default;

void SimRun::advance(std::int64_t measured) { impl_->model->advance(measured); }

void SimRun::advance_to_end() { impl_->model->advance(-1); }

bool SimRun::ended() const { return impl_->model->ended(); }

bool SimRun::settled_over() const {
  const auto& w = impl_->model->watch();
  return w && w->settled_over();
}

bool SimRun::done() const { return ended() || impl_->model->stopped_over(); }

std::int64_t SimRun::measured_done() const { return impl_->model->measured_done(); }

std::int64_t SimRun::over() const {
  const auto& w = impl_->model->watch();
  return w ? w->over() : 0;
}

std::int64_t SimRun::resolved() const {
  const auto& w = impl_->model->watch();
  return w ? w->resolved() : measured_done();
}

std::uint64_t SimRun::events() const { return impl_->model->events(); }

double SimRun::p99_so_far_ms() const { return impl_->model->p99_so_far_ms(); }

const Scenario& SimRun::scenario() const { return impl_->scenario; }

SimResult SimRun::finish() { return impl_->model->end(); }

}  // namespace npusim::sim
