// The card model's op table: what each graph op is (unit, launch cost, dynamic shape, measured
// or predicted time) and its timing at a gear, core grant and L2 hit ratio, cached.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "model/op_table.h"
#include "model/predict.h"
#include "sim/card_model.h"

namespace npusim::sim::card {

namespace {

const char* pool_kind(Unit u) { return u == Unit::kCube || u == Unit::kMix ? "cube" : "vector"; }

}  // namespace

CardModel::CardModel(const Scenario& sc, const HwSpec& hw, const SimOptions& opt)
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
    host_->route_to_owner();
  }
  // The resources' completions come straight here (on_event() books them in the resource).
  hbm_.route_to_owner();
  l2_.route_to_owner();
  aicpu_.route_to_owner();
  pcie_.route_to_owner();
  pcie_out_.route_to_owner();
  if (sc.contention.scheduler) sched_ns_ = us_to_ns(hw.overhead.scheduler_task_us);
  launch_depth_ = static_cast<std::uint32_t>(std::max(1, hw.host.launch_queue_depth));
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

void CardModel::check_fits() const {
  const Deployment& d = sc_.deployment;
  if (d.cube_cores_per_stream > hw_.chip.cube_cores) {
    throw InputError(d.cube_limit_pos,
                     fmt::format("[deployment].cube_cores_per_stream: {} exceeds the {} cube "
                                 "cores of {}",
                                 d.cube_cores_per_stream, hw_.chip.cube_cores, hw_.chip.name));
  }
  if (d.vector_cores_per_stream > hw_.chip.vector_cores) {
    throw InputError(d.vector_limit_pos,
                     fmt::format("[deployment].vector_cores_per_stream: {} exceeds the {} vector "
                                 "cores of {}",
                                 d.vector_cores_per_stream, hw_.chip.vector_cores, hw_.chip.name));
  }
}

void CardModel::build_ops() {
  const Graph& g = sc_.graph;
  order_ = g.topo_order();
  batch_ops_ = static_cast<std::uint32_t>(order_.size());
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
      const int pool = info.unit == Unit::kCube || info.unit == Unit::kMix ? hw_.chip.cube_cores
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
      info.any_core = info.bypass && sc_.contention.core_limit_bypass;
      const bool bypass = info.any_core;
      budget.cube_cores = bypass ? cube_.total() : cube_.cap();
      budget.vector_cores = bypass ? vector_.total() : vector_.cap();
      anchoring_.classify(i, budget, result_.warnings);
    } catch (const InputError& e) {
      if (e.pos().line != 0) throw;
      throw InputError(gop.pos, e.detail());  // attr parse errors carry no position
    }
  }
  const std::size_t gears = sc_.deployment.gears.size();
  op_source_.resize(g.size() * gears);
  want_memo_.assign(g.size() * gears, WantMemo{});
  for (std::size_t i = 0; i < g.size(); ++i) {
    for (std::size_t gi = 0; gi < gears; ++gi) op_source_[i * gears + gi] = anchoring_.source(i, gi);
  }
}

const PreparedOp& CardModel::desc(std::size_t op, std::uint32_t gear_idx) {
  std::optional<PreparedOp>& slot = descs_[op * sc_.deployment.gears.size() + gear_idx];
  if (!slot) slot = sc_.graph.instantiate(op, sc_.deployment.gears[gear_idx]);
  return *slot;
}

// The op's timing with `cube` / `vector` cores granted (its budget) and an L2 hit ratio of
// l2/kL2Buckets (-1: the spec's default), past timing()'s memo: predicted once per key, then kept.
const Timing& CardModel::timing_slow(std::uint64_t key, std::size_t op, std::uint32_t gear_idx,
                                     int cube, int vector, int l2) {
  if (const auto it = timings_.find(key); it != timings_.end()) return it->second;
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
      t.vector = std::min(vector, static_cast<int>(std::ceil(t.cube * hw_.cube.mix_vector_ratio)));
    }
  }
  plan_memory(t);
  return timings_.emplace(key, t).first->second;
}

// The memory phase moves its bytes through HBM and L2, each shared with the other streams' ops
// as a fluid, each transfer capped at the rate that ends it with the phase when alone; the
// phase ends when both transfers have.
void CardModel::plan_memory(Timing& t) const {
  t.via_hbm = t.memory_ns > 0 && t.hbm_bytes > 0;
  t.via_l2 = sc_.contention.l2_bandwidth && t.memory_ns > 0 && t.l2_bytes > 0;
  t.memory_parts = (t.via_hbm ? 1 : 0) + (t.via_l2 ? 1 : 0);
  if (t.via_hbm) {
    t.hbm_cap = t.hbm_bytes / static_cast<double>(t.memory_ns);
    t.hbm_alone = hbm_.alone(t.hbm_bytes, t.hbm_cap);
  }
  if (t.via_l2) {
    t.l2_cap = t.l2_bytes / static_cast<double>(t.memory_ns);
    t.l2_alone = l2_.alone(t.l2_bytes, t.l2_cap);
  }
}

// The L2 model. Between batches a stream re-reads the same weights and tables, and each op
// reads what the op before it just wrote, so a stream's reads stay in L2 as long as the
// working sets of all streams running a batch fit: the hit ratio is
// min(1, L2 bytes / sum of the running streams' working sets), where a stream's working set is
// the bytes its graph reads per batch at its gear. More streams -> more working sets -> they
// flush each other's lines, and memory-bound ops slow down. Quantised down to 1/kL2Buckets.
double CardModel::graph_working_set(std::uint32_t gi) {
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

}  // namespace npusim::sim::card
