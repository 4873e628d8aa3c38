// Reads one profile into the advisor's Context (the kernel table streamed once into compact
// tasks and per-kernel statistics), infers the chip, and runs every rule.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "profile/advisor/context.h"
#include "profile/op_statistic.h"

namespace npusim::profile {

ChipFigures chip_figures(const HwSpec& hw, const std::string& source) {
  ChipFigures c;
  c.name = hw.chip.name;
  c.cube_cores = hw.chip.cube_cores;
  c.vector_cores = hw.chip.vector_cores;
  c.freq_mhz = hw.chip.freq_mhz;
  c.hbm_gbps = hw.memory.hbm_bandwidth_gbps;
  c.pcie_gbps = hw.pcie.bandwidth_gbps;
  c.pcie_efficiency = hw.pcie.efficiency;
  c.cores_source = source;
  c.bandwidth_source = source;
  return c;
}

namespace advisor {
namespace {

// Sums a row's pipe ratios into its kernel, weighted by the row's duration, so the kernel's
// ratio is the share of its total time each pipe was busy.
void add_pipes(Kernel& k, const KernelRow& row) {
  std::array<double, kPipeCount> r{};
  r[kMac] = row.aic_mac_ratio;
  r[kAicScalar] = row.aic_scalar_ratio;
  r[kMte1] = row.aic_mte1_ratio;
  r[kAicMte2] = row.aic_mte2_ratio > 0 ? row.aic_mte2_ratio : row.mte2_ratio;
  r[kFixpipe] = row.aic_fixpipe_ratio;
  r[kVec] = row.aiv_vec_ratio;
  r[kAivScalar] = row.aiv_scalar_ratio;
  r[kAivMte2] = row.aiv_mte2_ratio;
  r[kMte3] = row.aiv_mte3_ratio;
  double any = 0;
  for (double v : r) any += v;
  if (any <= 0) return;  // no PMU data on this row (N/A or a metric group without ratios)
  for (int p = 0; p < kPipeCount; ++p) k.ratio_us[std::size_t(p)] += r[std::size_t(p)] * row.duration_us;
  k.pmu_us += row.duration_us;
  ++k.pmu_calls;
  const bool cube = r[kMac] + r[kAicScalar] + r[kMte1] + r[kAicMte2] + r[kFixpipe] > 0;
  const bool vec = r[kVec] + r[kAivScalar] + r[kAivMte2] + r[kMte3] > 0;
  k.cube_side = k.cube_side || cube;
  k.vector_side = k.vector_side || vec;
  // MTE2 busy time of the side that loads the most, for the achieved bandwidth.
  double ratio = row.mte2_ratio, time = row.mte2_time_us;
  if (row.aic_mte2_ratio > ratio) ratio = row.aic_mte2_ratio, time = row.aic_mte2_time_us;
  if (row.aiv_mte2_ratio > ratio) ratio = row.aiv_mte2_ratio, time = row.aiv_mte2_time_us;
  k.mte2_time_us += time;
}

class Reader {
 public:
  explicit Reader(Context& c) : c_(c) {}

  void add(const KernelRow& row) {
    Task t;
    t.start_ns = row.start_ns;
    t.end_ns = row.end_ns();
    t.duration_us = row.duration_us;
    t.wait_us = row.wait_us;
    t.stream = row.stream_id;
    t.step = row.step_id;
    t.line = row.line;
    t.kind = row.kind;
    t.name = c_.intern(row.name);
    t.type = row.type.empty() ? t.name : c_.intern(row.type);
    auto& st = steps_[row.step_id];
    if (row.start_ns < st.last_start) c_.unordered = true;
    st.last_start = std::max(st.last_start, row.start_ns);
    Report& r = c_.report;
    if (row.kind == TaskKind::kCommunication) {
      ++r.communication_ops;
      r.communication_time_us += row.duration_us;
      add_type(comm_types_, c_.str(t.type), row);
    } else if (!is_compute(row.kind)) {
      ++r.other_tasks;
    } else {
      ++r.ops;
      r.total_time_us += row.duration_us;
      r.wait_time_us += row.wait_us;
      if (row.type.empty()) ++c_.untyped;
      TypeStat& ts = add_type(types_, c_.str(t.type), row);
      ts.cube_cycles += row.aic_total_cycles;
      ts.mac_cycles += row.aic_mac_ratio * row.aic_total_cycles;
      t.kernel = add_kernel(row, c_.str(t.type));
      chip_samples(row);
    }
    c_.tasks.push_back(t);
  }

  void finish() {
    for (auto& [k, t] : types_) {
      const double total = c_.report.total_time_us;
      t.share = total > 0 ? t.total_us / total : 0;
      c_.report.op_types.push_back(t);
    }
    for (auto& [k, t] : comm_types_) c_.report.communication_types.push_back(t);
  }

 private:
  struct StepOrder {
    std::int64_t last_start = std::numeric_limits<std::int64_t>::min();
  };

  TypeStat& add_type(std::unordered_map<std::string, TypeStat>& m, const std::string& type,
                     const KernelRow& row) {
    auto& t = m[type];
    if (t.count == 0) {
      t.type = type;
      t.kind = task_kind_name(row.kind);
      t.min_us = row.duration_us;
    }
    ++t.count;
    t.total_us += row.duration_us;
    t.min_us = std::min(t.min_us, row.duration_us);
    t.max_us = std::max(t.max_us, row.duration_us);
    return t;
  }

  std::uint32_t add_kernel(const KernelRow& row, const std::string& type) {
    key_.assign(type);
    key_ += '\x1f';
    key_ += row.input_shapes;
    key_ += '\x1f';
    key_ += row.input_dtypes;
    auto [it, fresh] = c_.kernel_ids.emplace(key_, std::uint32_t(c_.kernels.size()));
    if (fresh) {
      Kernel k;
      k.type = type;
      k.shapes = row.input_shapes;
      k.dtypes = row.input_dtypes;
      k.output_shapes = row.output_shapes;
      k.kind = row.kind;
      k.first_name = row.name;
      c_.kernels.push_back(std::move(k));
    }
    Kernel& k = c_.kernels[it->second];
    ++k.count;
    k.total_us += row.duration_us;
    if (row.duration_us > k.max_us || k.count == 1) {
      k.max_us = row.duration_us;
      k.max_name = row.name;
      k.max_line = row.line;
      k.block_dim = row.block_dim;
      k.mix_block_dim = row.mix_block_dim;
    }
    add_pipes(k, row);
    return it->second;
  }

  // Chip inference samples: aicore_time = cycles / (freq × block dim) on plain cube tasks, and
  // cube_utilization = cycles / (freq × cores × duration) (research/profile_formats.md §7).
  void chip_samples(const KernelRow& row) {
    constexpr std::size_t kMaxSamples = 20000;
    if (row.kind == TaskKind::kCube && row.block_dim > 0 && row.aic_time_us > 0 &&
        row.aic_total_cycles > 0 && c_.freq_samples.size() < kMaxSamples) {
      c_.freq_samples.push_back(row.aic_total_cycles / (row.aic_time_us * row.block_dim));
    }
    if (row.cube_utilization_pct > 0 && row.aic_total_cycles > 0 && row.duration_us > 0 &&
        c_.util_samples.size() < kMaxSamples) {
      c_.util_samples.push_back({row.aic_total_cycles, row.duration_us, row.cube_utilization_pct});
    }
  }

  Context& c_;
  std::string key_;
  std::unordered_map<std::string, TypeStat> types_, comm_types_;
  std::unordered_map<std::int64_t, StepOrder> steps_;
};

// The known chip that matches the inferred cube cores, with the nearest nominal clock at or
// above the measured one (a chip does not run above its nominal clock; it may run below it).
const ChipFigures* match_chip(const std::vector<ChipFigures>& known, int cores, double freq) {
  const ChipFigures* best = nullptr;
  for (const auto& k : known) {
    if (!k.cube_cores || *k.cube_cores != cores || !k.freq_mhz) continue;
    if (*k.freq_mhz < freq * 0.98) continue;  // 2 %: the cycle arithmetic's rounding
    if (best == nullptr || *k.freq_mhz < *best->freq_mhz) best = &k;
  }
  return best;
}

// The first kernel source that states the AI Core clock (a database's AICORE_FREQ, a timeline's
// AI Core Freq track), or nullptr.
const KernelFileInfo* source_clock(const Context& c) {
  for (const auto& i : c.infos) {
    if (i.aicore_freq_mhz) return &i;
  }
  return nullptr;
}

void infer_chip(Context& c) {
  ChipFigures& chip = c.report.chip;
  chip = c.opt.chip;
  if (c.opt.chip_given) return;
  if (!c.freq_samples.empty()) {
    chip.freq_mhz = std::round(median(c.freq_samples));
    chip.cores_source = fmt::format("frequency inferred from {} AI_CORE rows (aic_total_cycles / "
                                    "(aicore_time x block dim))",
                                    c.freq_samples.size());
  } else if (const KernelFileInfo* k = source_clock(c)) {
    chip.freq_mhz = *k->aicore_freq_mhz;
    chip.cores_source = fmt::format("frequency from {} ({})",
                                    k->source_kind == "db" ? "AICORE_FREQ" : "the AI Core Freq track",
                                    std::filesystem::path(k->file).filename().string());
  } else if (c.src.trace_json) {
    try {
      const TraceInfo t = read_trace_json(*c.src.trace_json);
      if (t.aicore_freq_mhz) {
        chip.freq_mhz = *t.aicore_freq_mhz;
        chip.cores_source = fmt::format("frequency from the AI Core Freq track of {}",
                                        c.src.trace_json->filename().string());
      }
    } catch (const InputError& e) {
      c.report.notes.push_back(fmt::format("timeline JSON not used: {}", e.what()));
    }
  }
  bool cores_inferred = false;
  if (chip.freq_mhz && !c.util_samples.empty()) {
    std::vector<double> cores;
    cores.reserve(c.util_samples.size());
    for (const auto& [cycles, dur, util] : c.util_samples) {
      cores.push_back(cycles / (*chip.freq_mhz * dur * util / 100.0));
    }
    chip.cube_cores = static_cast<int>(std::lround(median(cores)));
    chip.cores_source += fmt::format("; {} cube cores inferred from cube_utilization(%) of {} rows",
                                     *chip.cube_cores, cores.size());
    cores_inferred = true;
  }
  if (!chip.freq_mhz || !chip.cube_cores) {
    // Fall back on the chip spec the caller loaded (the default chip), and say so.
    if (c.opt.chip.freq_mhz && !chip.freq_mhz) chip.freq_mhz = c.opt.chip.freq_mhz;
    if (c.opt.chip.cube_cores && (!chip.cube_cores || chip.cube_cores == c.opt.chip.cube_cores)) {
      chip.cube_cores = c.opt.chip.cube_cores;
    }
    if (c.opt.chip.freq_mhz) {
      chip.cores_source = fmt::format("not inferable from the profile; {} used",
                                      c.opt.chip.cores_source);
    }
    return;
  }
  if (!cores_inferred) return;
  // Cores and clock measured: the bandwidths and vector cores are those of the matching chip.
  if (const ChipFigures* k = match_chip(c.opt.known_chips, *chip.cube_cores, *chip.freq_mhz)) {
    chip.name = k->name;
    chip.vector_cores = k->vector_cores;
    chip.hbm_gbps = k->hbm_gbps;
    chip.pcie_gbps = k->pcie_gbps;
    chip.pcie_efficiency = k->pcie_efficiency;
    chip.bandwidth_source = fmt::format("{} (the known chip with {} cube cores and the nearest "
                                        "nominal clock at or above {:.0f} MHz)",
                                        k->name, *chip.cube_cores, *chip.freq_mhz);
  } else if (!c.opt.known_chips.empty()) {
    chip.vector_cores.reset();
    chip.bandwidth_source = fmt::format("{}; no known chip has {} cube cores at {:.0f} MHz or "
                                        "more",
                                        c.opt.chip.bandwidth_source, *chip.cube_cores,
                                        *chip.freq_mhz);
  }
}

// Steps: span, busy time (union of all tasks) and idle time; the cycle sums come from the reader.
void finish_steps(Context& c, const std::map<std::int64_t, std::array<double, 2>>& cycles) {
  std::map<std::int64_t, StepStat> steps;
  std::map<std::int64_t, std::vector<Interval>> all;
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    const Task& t = c.tasks[i];
    StepStat& s = steps[t.step];
    s.step = t.step;
    all[t.step].push_back({t.start_ns, t.end_ns, i});
    if (is_compute(t.kind)) {
      ++s.ops;
      s.compute_us += t.duration_us;
    }
  }
  for (auto& [id, s] : steps) {
    // Without start times (msprof op) there is no timeline: spans stay 0 and the checks that
    // need one say so.
    if (c.timeline) {
      std::int64_t first = std::numeric_limits<std::int64_t>::max();
      std::int64_t last = std::numeric_limits<std::int64_t>::min();
      for (const auto& i : all[id]) {
        first = std::min(first, i.start);
        last = std::max(last, i.end);
      }
      s.span_us = us(last - first);
      s.busy_us = us(union_ns(all[id]));
    }
    s.idle_us = std::max(0.0, s.span_us - s.busy_us);
    if (const auto it = cycles.find(id); it != cycles.end()) {
      s.cube_cycles = it->second[0];
      s.mac_cycles = it->second[1];
    }
    c.report.steps.push_back(s);
  }
}

// The timeline order and the communication intervals the rules share.
void index_timeline(Context& c) {
  c.by_start.resize(c.tasks.size());
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) c.by_start[i] = i;
  std::stable_sort(c.by_start.begin(), c.by_start.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Task& x = c.tasks[a];
    const Task& y = c.tasks[b];
    return x.step != y.step ? x.step < y.step : x.start_ns < y.start_ns;
  });
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    const Task& t = c.tasks[i];
    if (t.kind == TaskKind::kCommunication) c.communication.push_back({t.start_ns, t.end_ns, i});
  }
  std::sort(c.communication.begin(), c.communication.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
}

void from_op_statistic(Context& c) {
  const auto rows = read_op_statistic(*c.src.op_statistic);
  double total = 0;
  for (const auto& r : rows) total += r.total_us;
  c.report.notes.push_back("no kernel table: op types from op_statistic only; the per-op checks "
                           "are skipped");
  for (const auto& r : rows) {
    TypeStat t;
    t.type = r.type;
    t.kind = task_kind_name(classify_task(r.core_type, r.type));
    t.count = std::uint64_t(std::max<std::int64_t>(0, r.count));
    t.total_us = r.total_us;
    t.min_us = r.min_us;
    t.max_us = r.max_us;
    t.share = total > 0 ? r.total_us / total : 0;
    c.report.ops += t.count;
    c.report.total_time_us += r.total_us;
    c.report.op_types.push_back(t);
  }
}

// Cross-check against op_statistic when both are present.
void cross_check(Context& c) {
  Report& r = c.report;
  double stat_total = 0;
  for (const auto& row : read_op_statistic(*c.src.op_statistic)) stat_total += row.total_us;
  const double mine = r.total_time_us + r.communication_time_us;
  if (stat_total > 0 && std::fabs(stat_total - mine) > 0.01 * stat_total &&
      std::fabs(stat_total - r.total_time_us) > 0.01 * stat_total) {
    r.notes.push_back(fmt::format("op_statistic total {} differs from the kernel table's {} "
                                  "(compute) / {} (with communication)",
                                  fmt_us(stat_total), fmt_us(r.total_time_us), fmt_us(mine)));
  }
}

template <class T>
T read_optional(Context& c, const std::optional<std::filesystem::path>& file, const char* what,
                T (*reader)(const std::filesystem::path&)) {
  if (!file) return T{};
  try {
    return reader(*file);
  } catch (const InputError& e) {
    c.report.notes.push_back(fmt::format("{} not used: {}", what, e.what()));
    return T{};
  }
}

}  // namespace

Report run(const ProfileSource& src, const AnalyzeOptions& opt) {
  Context c(src, opt);
  Report& r = c.report;
  r.profile = src.name;
  r.producer = src.producer;
  for (const auto& f : src.files()) r.files.push_back(f.string());
  if (src.profiler_info) {
    try {
      r.cann_version = read_profiler_info(*src.profiler_info).cann_version;
    } catch (const InputError& e) {
      r.notes.push_back(fmt::format("profiler_info not used: {}", e.what()));
    }
  }
  Reader reader(c);
  OpStatistic op_stat;  // msprof's op_statistic, rebuilt
  std::map<std::int64_t, std::array<double, 2>> step_cycles;  // cube, MAC cycles per step
  for (const auto& file : src.kernel_files) {
    c.infos.push_back(read_kernel_table(file, [&](const KernelRow& row) {
      reader.add(row);
      op_stat.add(row);
      if (is_compute(row.kind)) {
        auto& sc = step_cycles[row.step_id];
        sc[0] += row.aic_total_cycles;
        sc[1] += row.aic_mac_ratio * row.aic_total_cycles;
      }
    }, src.read));
    const KernelFileInfo& info = c.infos.back();
    r.layouts.push_back(info.layout);
    for (const auto& m : info.broken_row_messages) r.notes.push_back(m);
    if (info.broken_rows > info.broken_row_messages.size()) {
      r.notes.push_back(fmt::format("{}: {} broken rows skipped in all", file.string(),
                                    info.broken_rows));
    }
    for (const auto& m : info.missing_optional) {
      r.notes.push_back(fmt::format("{}: no '{}' column", file.filename().string(), m));
    }
  }
  reader.finish();
  c.timeline = !c.infos.empty() && std::all_of(c.infos.begin(), c.infos.end(),
                                                [](const auto& i) { return i.has_start_time; });
  c.collectives = read_optional(c, src.communication_json, "communication.json",
                                &read_communication_json);
  c.metadata = read_optional(c, src.profiler_metadata, "profiler_metadata.json",
                             &read_profiler_metadata);

  if (src.kernel_files.empty()) from_op_statistic(c);
  auto by_total = [](const TypeStat& a, const TypeStat& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.type < b.type;
  };
  std::sort(r.op_types.begin(), r.op_types.end(), by_total);
  if (!src.kernel_files.empty()) {
    r.op_statistic = op_stat.rows();
    r.other_device_types = op_stat.other_device_rows();
  }
  std::sort(r.communication_types.begin(), r.communication_types.end(), by_total);
  if (!src.kernel_files.empty() && src.op_statistic) cross_check(c);

  finish_steps(c, step_cycles);
  index_timeline(c);
  infer_chip(c);
  check_type_share(c);
  if (!src.kernel_files.empty()) {
    compute_step_breakdown(c);
    check_long_ops(c);
    check_max_over_mean(c);
    check_task_wait(c);
    check_aicpu(c);
    check_cube_utilization(c);
    check_pipe_bound(c);
    check_idle(c);
    check_exposed_communication(c);
    check_comm_byte_alignment(c);
    check_comm_small_packets(c);
    check_block_dim(c);
    check_shape_affinity(c);
    check_fused_ops(c);
    check_host_bound_sequences(c);
    check_environment(c);
    check_aicore_freq(c);
  }
  check_pcie(c);
  std::stable_sort(r.findings.begin(), r.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.time_us > b.time_us; });
  return std::move(c.report);
}

}  // namespace advisor

Report analyze(const ProfileSource& source, const AnalyzeOptions& options) {
  return advisor::run(source, options);
}

}  // namespace npusim::profile
