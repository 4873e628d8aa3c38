#include "profile/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "model/op_desc.h"
#include "profile/op_statistic.h"

namespace npusim::profile {

ChipFigures chip_figures(const HwSpec& hw, const std::string& source) {
  ChipFigures c;
  c.cube_cores = hw.chip.cube_cores;
  c.freq_mhz = hw.chip.freq_mhz;
  c.hbm_gbps = hw.memory.hbm_bandwidth_gbps;
  c.pcie_gbps = hw.pcie.bandwidth_gbps;
  c.pcie_efficiency = hw.pcie.efficiency;
  c.cores_source = source;
  c.bandwidth_source = source;
  return c;
}

namespace {

constexpr double kNsPerUs = 1000.0;

double us(std::int64_t ns) { return static_cast<double>(ns) / kNsPerUs; }

std::string fmt_us(double v) {
  if (v >= 100) return fmt::format("{:.0f} us", v);
  return fmt::format("{:.2f} us", v);
}
std::string pct(double share) { return fmt::format("{:.1f} %", share * 100.0); }

// An op is "aclop-style" (the GE single-op path, compiled online per attribute set) when its
// name does not carry the aclnn prefix of the two-phase aclnn API.
bool is_aclop_style(const std::string& name) { return name.rfind("aclnn", 0) != 0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The N largest items seen, in bounded memory.
template <class T>
class TopN {
 public:
  explicit TopN(std::size_t n) : n_(n) {}
  void add(double key, T item) {
    items_.emplace_back(key, std::move(item));
    if (items_.size() > 4 * n_ + 16) trim();
  }
  std::vector<std::pair<double, T>> sorted() {
    trim();
    std::stable_sort(items_.begin(), items_.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    return items_;
  }

 private:
  void trim() {
    if (items_.size() <= n_) return;
    std::nth_element(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(n_), items_.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    items_.resize(n_);
  }
  std::size_t n_;
  std::vector<std::pair<double, T>> items_;
};

struct SigStat {
  std::string type, shapes, dtypes;
  TaskKind kind = TaskKind::kUnknown;
  std::uint64_t count = 0;
  double total_us = 0, max_us = 0;
  std::string max_name;
  std::uint32_t max_line = 0;
  // MTE2-bound calls of this kernel
  std::uint64_t mte2_count = 0;
  double mte2_duration_us = 0, mte2_time_us = 0;
  std::string first_name;
};

struct LastOp {
  TaskKind kind = TaskKind::kUnknown;
  std::string type, name;
};

struct WaitItem {
  std::string name, prev, detail;
  std::uint32_t line = 0;
};

struct GapItem {
  std::string before, after;
  std::int64_t step = -1;
};

struct StepAcc {
  StepStat stat;
  std::int64_t first_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_end_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t covered_end_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_start_ns = std::numeric_limits<std::int64_t>::min();
  std::int64_t busy_ns = 0;
  std::string covered_by;
};

enum WaitCause { kAfterAicpu, kAfterDynamicShape, kRecompile, kHostLaunch, kCauseCount };
const char* const kCauseTitle[kCauseCount] = {
    "task wait right after an AI CPU op", "task wait after a dynamic-shape op",
    "task wait of aclop-style ops whose shapes changed: likely online recompilation",
    "task wait: the host launched slower than the device ran"};

class Analyzer {
 public:
  Analyzer(const ProfileSource& src, const AnalyzeOptions& opt)
      : src_(src), opt_(opt), th_(opt.thresholds), long_ops_(size_t(th_.max_ops_listed)),
        gaps_(size_t(th_.max_ops_listed)) {
    for (auto& w : waits_) w = TopN<WaitItem>(size_t(th_.max_ops_listed));
  }

  Report run();

 private:
  void add(const KernelRow& row);
  void add_timeline(const KernelRow& row);
  void infer_chip();
  void finish_steps();
  void check_type_share();
  void check_long_ops();
  void check_max_over_mean();
  void check_task_wait();
  void check_aicpu();
  void check_cube_utilization();
  void check_mte2();
  void check_idle();
  void check_pcie();
  void from_op_statistic();
  void add_finding(Finding f);
  void skip(const std::string& check, const std::string& reason) {
    report_.skipped.push_back({check, reason});
  }
  [[nodiscard]] double step_time_us() const;
  /// The first kernel source that states the AI Core clock (a database's AICORE_FREQ, a
  /// timeline's AI Core Freq track), or nullptr.
  [[nodiscard]] const KernelFileInfo* source_clock() const {
    for (const auto& i : infos_) {
      if (i.aicore_freq_mhz) return &i;
    }
    return nullptr;
  }

  const ProfileSource& src_;
  const AnalyzeOptions& opt_;
  const Thresholds& th_;
  Report report_;
  std::vector<KernelFileInfo> infos_;
  std::unordered_map<std::string, TypeStat> types_, comm_types_;
  std::unordered_map<std::string, SigStat> sigs_;
  std::string key_;
  std::unordered_map<std::int64_t, LastOp> last_on_stream_;
  std::unordered_map<std::string, std::string> last_sig_of_type_;
  std::map<std::int64_t, StepAcc> steps_;
  bool unordered_ = false;
  TopN<std::pair<std::string, std::uint32_t>> long_ops_;
  std::uint64_t long_count_ = 0;
  double long_total_us_ = 0;
  std::array<TopN<WaitItem>, kCauseCount> waits_{TopN<WaitItem>(1), TopN<WaitItem>(1),
                                                 TopN<WaitItem>(1), TopN<WaitItem>(1)};
  std::array<double, kCauseCount> wait_total_{};
  std::array<std::uint64_t, kCauseCount> wait_count_{};
  TopN<GapItem> gaps_;
  std::vector<double> freq_samples_;
  std::vector<std::array<double, 3>> util_samples_;  // cycles, duration, util %
  bool has_wait_column_ = false;
  std::uint64_t untyped_ = 0;  // compute rows without an op type (Level0)
  OpStatistic op_stat_;        // msprof's op_statistic, rebuilt
};

void Analyzer::add(const KernelRow& row) {
  add_timeline(row);
  op_stat_.add(row);
  if (row.kind == TaskKind::kCommunication) {
    ++report_.communication_ops;
    report_.communication_time_us += row.duration_us;
    auto& t = comm_types_[row.type.empty() ? row.name : row.type];
    if (t.count == 0) {
      t.type = row.type.empty() ? row.name : row.type;
      t.kind = task_kind_name(row.kind);
      t.min_us = row.duration_us;
    }
    ++t.count;
    t.total_us += row.duration_us;
    t.min_us = std::min(t.min_us, row.duration_us);
    t.max_us = std::max(t.max_us, row.duration_us);
    return;
  }
  if (!is_compute(row.kind)) {
    ++report_.other_tasks;
    return;
  }
  ++report_.ops;
  report_.total_time_us += row.duration_us;
  report_.wait_time_us += row.wait_us;
  const std::string& type = row.type.empty() ? row.name : row.type;
  if (row.type.empty()) ++untyped_;

  auto& t = types_[type];
  if (t.count == 0) {
    t.type = type;
    t.kind = task_kind_name(row.kind);
    t.min_us = row.duration_us;
  }
  ++t.count;
  t.total_us += row.duration_us;
  t.min_us = std::min(t.min_us, row.duration_us);
  t.max_us = std::max(t.max_us, row.duration_us);
  t.cube_cycles += row.aic_total_cycles;

  key_.assign(type);
  key_ += '\x1f';
  key_ += row.input_shapes;
  key_ += '\x1f';
  key_ += row.input_dtypes;
  auto& s = sigs_[key_];
  if (s.count == 0) {
    s.type = type;
    s.shapes = row.input_shapes;
    s.dtypes = row.input_dtypes;
    s.kind = row.kind;
    s.first_name = row.name;
  }
  ++s.count;
  s.total_us += row.duration_us;
  if (row.duration_us > s.max_us) {
    s.max_us = row.duration_us;
    s.max_name = row.name;
    s.max_line = row.line;
  }

  if (row.duration_us > th_.long_op_us) {
    ++long_count_;
    long_total_us_ += row.duration_us;
    long_ops_.add(row.duration_us, {row.name, row.line});
  }

  // MTE2: the core side with the larger ratio is the one loading the inputs.
  double ratio = row.mte2_ratio, time = row.mte2_time_us;
  if (row.aic_mte2_ratio > ratio) ratio = row.aic_mte2_ratio, time = row.aic_mte2_time_us;
  if (row.aiv_mte2_ratio > ratio) ratio = row.aiv_mte2_ratio, time = row.aiv_mte2_time_us;
  if (ratio > th_.mte2_ratio && time > 0) {
    ++s.mte2_count;
    s.mte2_duration_us += row.duration_us;
    s.mte2_time_us += time;
  }

  // Chip inference samples: aicore_time = cycles / (freq × block dim) on plain cube tasks, and
  // cube_utilization = cycles / (freq × cores × duration) (research/profile_formats.md §7).
  constexpr std::size_t kMaxSamples = 20000;
  if (row.kind == TaskKind::kCube && row.block_dim > 0 && row.aic_time_us > 0 &&
      row.aic_total_cycles > 0 && freq_samples_.size() < kMaxSamples) {
    freq_samples_.push_back(row.aic_total_cycles / (row.aic_time_us * row.block_dim));
  }
  if (row.cube_utilization_pct > 0 && row.aic_total_cycles > 0 && row.duration_us > 0 &&
      util_samples_.size() < kMaxSamples) {
    util_samples_.push_back({row.aic_total_cycles, row.duration_us, row.cube_utilization_pct});
  }

  // Task wait and its likely cause, from the previous op on the same stream.
  const auto prev_it = last_on_stream_.find(row.stream_id);
  const LastOp* prev = prev_it == last_on_stream_.end() ? nullptr : &prev_it->second;
  auto& last_sig = last_sig_of_type_[type];
  const bool sig_changed = !last_sig.empty() && last_sig != key_;
  if (row.wait_us > th_.task_wait_us) {
    WaitCause cause = kHostLaunch;
    std::string detail;
    if (prev != nullptr && prev->kind == TaskKind::kAicpu) {
      cause = kAfterAicpu;
      detail = fmt::format("after AI CPU op {} ({})", prev->name, prev->type);
    } else if (prev != nullptr &&
               std::find(th_.dynamic_shape_types.begin(), th_.dynamic_shape_types.end(),
                         prev->type) != th_.dynamic_shape_types.end()) {
      cause = kAfterDynamicShape;
      detail = fmt::format("after {} ({}), whose output shape depends on its data", prev->name,
                           prev->type);
    } else if (is_aclop_style(row.name) && sig_changed) {
      cause = kRecompile;
      detail = fmt::format("aclop {} called with new shapes/dtypes {} | {}", type,
                           row.input_shapes, row.input_dtypes);
    }
    wait_total_[cause] += row.wait_us;
    ++wait_count_[cause];
    waits_[cause].add(row.wait_us, {row.name, prev ? prev->name : "", detail, row.line});
  }
  last_sig = key_;
  auto& last = last_on_stream_[row.stream_id];
  last.kind = row.kind;
  last.type = type;
  last.name = row.name;
}

void Analyzer::add_timeline(const KernelRow& row) {
  auto& st = steps_[row.step_id];
  st.stat.step = row.step_id;
  const std::int64_t start = row.start_ns, end = row.end_ns();
  if (start < st.last_start_ns) unordered_ = true;
  st.last_start_ns = std::max(st.last_start_ns, start);
  st.first_ns = std::min(st.first_ns, start);
  st.last_end_ns = std::max(st.last_end_ns, end);
  if (is_compute(row.kind)) {
    ++st.stat.ops;
    st.stat.compute_us += row.duration_us;
    st.stat.cube_cycles += row.aic_total_cycles;
  }
  // Union of busy intervals, streaming (rows come in start order).
  if (st.covered_end_ns == std::numeric_limits<std::int64_t>::min() || start >= st.covered_end_ns) {
    if (st.covered_end_ns != std::numeric_limits<std::int64_t>::min()) {
      const double gap = us(start - st.covered_end_ns);
      if (gap >= th_.idle_gap_min_us) gaps_.add(gap, {st.covered_by, row.name, row.step_id});
    }
    st.busy_ns += end - start;
    st.covered_end_ns = end;
    st.covered_by = row.name;
  } else if (end > st.covered_end_ns) {
    st.busy_ns += end - st.covered_end_ns;
    st.covered_end_ns = end;
    st.covered_by = row.name;
  }
}

double Analyzer::step_time_us() const {
  double span = 0;
  for (const auto& s : report_.steps) span += s.span_us;
  return span > 0 ? span : report_.total_time_us;
}

void Analyzer::add_finding(Finding f) {
  const double base = step_time_us();
  if (f.severity.empty()) {
    const double share = base > 0 ? f.time_us / base : 0;
    f.severity = share >= th_.high_share ? "high" : share >= th_.medium_share ? "medium" : "low";
  }
  report_.findings.push_back(std::move(f));
}

void Analyzer::infer_chip() {
  ChipFigures& c = report_.chip;
  c = opt_.chip;
  if (opt_.chip_given) return;
  if (!freq_samples_.empty()) {
    c.freq_mhz = std::round(median(freq_samples_));
    c.cores_source = fmt::format("frequency inferred from {} AI_CORE rows (aic_total_cycles / "
                                 "(aicore_time x block dim))",
                                 freq_samples_.size());
  } else if (const auto* db = source_clock()) {
    c.freq_mhz = *db->aicore_freq_mhz;
    c.cores_source = fmt::format("frequency from {} ({})",
                                 db->source_kind == "db" ? "AICORE_FREQ" : "the AI Core Freq track",
                                 std::filesystem::path(db->file).filename().string());
  } else if (src_.trace_json) {
    try {
      const TraceInfo t = read_trace_json(*src_.trace_json);
      if (t.aicore_freq_mhz) {
        c.freq_mhz = *t.aicore_freq_mhz;
        c.cores_source = fmt::format("frequency from the AI Core Freq track of {}",
                                     src_.trace_json->filename().string());
      }
    } catch (const InputError& e) {
      report_.notes.push_back(fmt::format("timeline JSON not used: {}", e.what()));
    }
  }
  if (c.freq_mhz && !util_samples_.empty()) {
    std::vector<double> cores;
    cores.reserve(util_samples_.size());
    for (const auto& [cycles, dur, util] : util_samples_) {
      cores.push_back(cycles / (*c.freq_mhz * dur * util / 100.0));
    }
    c.cube_cores = static_cast<int>(std::lround(median(cores)));
    c.cores_source += fmt::format("; {} cube cores inferred from cube_utilization(%) of {} rows",
                                  *c.cube_cores, cores.size());
  }
  if (!c.freq_mhz || !c.cube_cores) {
    // Fall back on the chip spec the caller loaded (the default chip), and say so.
    if (opt_.chip.freq_mhz && !c.freq_mhz) c.freq_mhz = opt_.chip.freq_mhz;
    if (opt_.chip.cube_cores && (!c.cube_cores || c.cube_cores == opt_.chip.cube_cores)) {
      c.cube_cores = opt_.chip.cube_cores;
    }
    if (opt_.chip.freq_mhz) {
      c.cores_source = fmt::format("not inferable from the profile; {} used",
                                   opt_.chip.cores_source);
    }
  }
}

void Analyzer::finish_steps() {
  bool timeline = !infos_.empty();
  for (const auto& i : infos_) timeline = timeline && i.has_start_time;
  for (auto& [id, st] : steps_) {
    StepStat s = st.stat;
    // Without start times (msprof op) there is no timeline: spans stay 0 and the checks that
    // need one say so.
    if (timeline && st.first_ns <= st.last_end_ns) s.span_us = us(st.last_end_ns - st.first_ns);
    s.busy_us = timeline ? us(st.busy_ns) : 0;
    s.idle_us = std::max(0.0, s.span_us - s.busy_us);
    report_.steps.push_back(s);
  }
}

void Analyzer::check_type_share() {
  if (untyped_ > 0 && untyped_ == report_.ops) {
    skip("op_type_share", "no op types in the profile (profiler Level0 writes N/A): ops are "
                          "grouped by name");
    return;
  }
  // With a single op type (a one-kernel run) a share says nothing.
  if (report_.op_types.size() < 2) return;
  for (const auto& t : report_.op_types) {
    if (t.share <= th_.type_share) continue;
    Finding f;
    f.check = "op_type_share";
    f.title = fmt::format("{} takes {} of compute time (above {})", t.type, pct(t.share),
                          pct(th_.type_share));
    f.ops = {t.type};
    f.time_us = t.total_us;
    f.evidence = {{"count", double(t.count), ""},   {"total_us", t.total_us, ""},
                  {"mean_us", t.mean_us(), ""},     {"min_us", t.min_us, ""},
                  {"max_us", t.max_us, ""},         {"share", t.share, ""}};
    f.advice = {fmt::format("Look at the shapes {} runs with: a fused or better-tiled kernel for "
                            "the dominant shape pays off most here",
                            t.type),
                "Check whether the calls are all needed (repeated recomputation, redundant casts "
                "or copies feeding it)"};
    add_finding(std::move(f));
  }
}

void Analyzer::check_long_ops() {
  if (long_count_ == 0) return;
  Finding f;
  f.check = "long_ops";
  f.title = fmt::format("{} ops run longer than {}", long_count_, fmt_us(th_.long_op_us));
  f.time_us = long_total_us_;
  f.evidence.push_back({"count", double(long_count_), ""});
  f.evidence.push_back({"total_us", long_total_us_, ""});
  for (const auto& [d, item] : long_ops_.sorted()) {
    f.ops.push_back(item.first);
    f.evidence.push_back({item.first, std::nullopt, fmt::format("{} (line {})", fmt_us(d),
                                                                item.second)});
  }
  f.advice = {"Split or re-tile these ops; check their block dim uses every core",
              "Compare with the same op on other shapes: a slow one may have fallen off its fast "
              "path (unaligned or int64 inputs, an unsupported format)"};
  add_finding(std::move(f));
}

void Analyzer::check_max_over_mean() {
  std::vector<const SigStat*> hits;
  for (const auto& [k, s] : sigs_) {
    if (s.count >= std::uint64_t(th_.max_over_mean_min_count) &&
        s.max_us > th_.max_over_mean * (s.total_us / double(s.count))) {
      hits.push_back(&s);
    }
  }
  if (hits.empty()) return;
  auto excess = [](const SigStat* s) { return s->max_us - s->total_us / double(s->count); };
  std::sort(hits.begin(), hits.end(),
            [&](const SigStat* a, const SigStat* b) { return excess(a) > excess(b); });
  Finding f;
  f.check = "max_over_mean";
  f.title = fmt::format("{} kernels have calls far slower than their mean (max > {}x mean)",
                        hits.size(), th_.max_over_mean);
  for (const SigStat* s : hits) {
    f.time_us += excess(s);
    if (f.ops.size() < std::size_t(th_.max_ops_listed)) {
      f.ops.push_back(s->max_name);
      f.evidence.push_back(
          {s->max_name, std::nullopt,
           fmt::format("{} [{}]: {} calls, mean {}, max {} (line {})", s->type, s->shapes,
                       s->count, fmt_us(s->total_us / double(s->count)), fmt_us(s->max_us),
                       s->max_line)});
    }
  }
  f.advice = {"The same kernel on the same shapes was slow once: look at what ran beside it "
              "(communication, another stream) or before it (a synchronisation, a cold cache)",
              "If it is the first call, it is warm-up: profile more steps and skip the first"};
  add_finding(std::move(f));
}

void Analyzer::check_task_wait() {
  if (!has_wait_column_) {
    skip("task_wait", "no Task Wait Time(us) / Wait Time(us) column");
    return;
  }
  static const std::vector<std::string> kAdvice[kCauseCount] = {
      {"AI CPU ops block the stream while they run on the slow AI CPU and hand back: move the op "
       "to the AI core (cast int64 inputs to int32) or to the host, or reorder it off the "
       "critical path"},
      {"The next op waits for the host to read the data-dependent shape back: give the op a "
       "static upper bound (pad), or move it out of the step"},
      {"Switch to the aclnn API (torch_npu: keep the default aclnn ops) or disable online "
       "compilation (torch_npu.npu.set_compile_mode(jit_compile=False)) so aclop ops use "
       "prebuilt binaries",
       "Keep the shapes and attributes of the op stable (bucket or pad the shapes)"},
      {"The device ran ahead of the host: reduce per-op host cost (fewer, larger ops; fused "
       "kernels; graph mode / aclgraph), or check host CPU binding and load"}};
  // Host compile APIs of api_statistic (opCompile, aclopCompileAndExecute...) back up the
  // recompilation cause with the host's own measurement.
  std::vector<ApiStatRow> compile_apis;
  double compile_only_us = 0;
  if (src_.api_statistic) {
    for (auto& a : read_api_statistic(*src_.api_statistic)) {
      if (a.api.find("Compile") == std::string::npos) continue;
      // aclopCompileAndExecute includes the execution; only pure compile APIs count as time.
      if (a.api.find("Execute") == std::string::npos) compile_only_us += a.time_us;
      compile_apis.push_back(std::move(a));
    }
  }
  auto add_compile_evidence = [&](Finding& f) {
    for (const auto& a : compile_apis) {
      f.evidence.push_back({"api_statistic " + a.api, std::nullopt,
                            fmt::format("{} in {} calls on the host", fmt_us(a.time_us),
                                        a.count)});
    }
  };
  if (wait_count_[kRecompile] == 0 && compile_only_us > th_.task_wait_us) {
    Finding f;
    f.check = "task_wait";
    f.title = fmt::format("the host compiled ops online for {} (api_statistic)",
                          fmt_us(compile_only_us));
    f.time_us = compile_only_us;
    f.evidence.push_back({"cause", std::nullopt, "recompilation"});
    add_compile_evidence(f);
    for (const auto& a : compile_apis) f.ops.push_back(a.api);
    f.advice = {"Switch to the aclnn API or disable online compilation "
                "(torch_npu.npu.set_compile_mode(jit_compile=False)) so aclop ops use prebuilt "
                "binaries"};
    add_finding(std::move(f));
  }
  for (int c = 0; c < kCauseCount; ++c) {
    if (wait_count_[c] == 0) continue;
    Finding f;
    f.check = "task_wait";
    f.title = fmt::format("{}: {} ops, {} waited", kCauseTitle[c], wait_count_[c],
                          fmt_us(wait_total_[c]));
    f.time_us = wait_total_[c];
    static const char* const kCauseKey[kCauseCount] = {"after_aicpu", "after_dynamic_shape",
                                                       "recompilation", "host_launch"};
    f.evidence.push_back({"cause", std::nullopt, kCauseKey[c]});
    f.evidence.push_back({"count", double(wait_count_[c]), ""});
    f.evidence.push_back({"wait_us", wait_total_[c], ""});
    for (const auto& [w, item] : waits_[c].sorted()) {
      f.ops.push_back(item.name);
      f.evidence.push_back({item.name, std::nullopt,
                            fmt::format("waited {} (line {}){}", fmt_us(w), item.line,
                                        item.detail.empty() ? "" : "; " + item.detail)});
    }
    if (c == kRecompile) add_compile_evidence(f);
    f.advice = kAdvice[c];
    add_finding(std::move(f));
  }
}

void Analyzer::check_aicpu() {
  Finding f;
  f.check = "aicpu";
  std::uint64_t n = 0;
  bool int64 = false;
  for (const auto& t : report_.op_types) {
    if (t.kind != "aicpu") continue;
    n += t.count;
    f.time_us += t.total_us;
    f.ops.push_back(t.type);
    f.evidence.push_back({t.type, std::nullopt,
                          fmt::format("{} calls, {} total, {} of compute", t.count,
                                      fmt_us(t.total_us), pct(t.share))});
  }
  if (n == 0) return;
  for (const auto& [k, s] : sigs_) {
    if (s.kind == TaskKind::kAicpu && s.dtypes.find("INT64") != std::string::npos) int64 = true;
  }
  f.title = fmt::format("{} AI CPU ops take {}", n, fmt_us(f.time_us));
  if (int64) {
    f.advice.emplace_back("Some AI CPU ops take INT64 inputs: cast indices to int32 (or values "
                          "to fp32) where they fit, so the AI core kernel is used");
  }
  f.advice.emplace_back("Move the op to the host if its inputs are small, or replace it with an "
                        "AI core equivalent");
  add_finding(std::move(f));
}

void Analyzer::check_cube_utilization() {
  bool cycles = false;
  for (const auto& i : infos_) cycles = cycles || i.has_cycles;
  if (!cycles) {
    skip("cube_utilization", "no aic_total_cycles column (the PipeUtilization metric group is "
                             "needed)");
    return;
  }
  const ChipFigures& c = report_.chip;
  if (!c.cube_cores || !c.freq_mhz || *c.cube_cores <= 0 || *c.freq_mhz <= 0) {
    skip("cube_utilization", "cube core count or frequency unknown: pass --hw");
    return;
  }
  const double rate = *c.cube_cores * *c.freq_mhz;  // cycles per µs of the whole chip
  for (auto& s : report_.steps) {
    if (s.span_us > 0) s.cube_utilization = s.cube_cycles / (s.span_us * rate);
  }
  for (auto& t : report_.op_types) {
    if (t.total_us > 0 && t.cube_cycles > 0) t.cube_utilization = t.cube_cycles / (t.total_us * rate);
  }
  Finding f;
  f.check = "cube_utilization";
  f.severity = "info";
  double cycles_sum = 0, span = 0;
  for (const auto& s : report_.steps) {
    cycles_sum += s.cube_cycles;
    span += s.span_us;
    f.evidence.push_back({s.step >= 0 ? fmt::format("step_{}", s.step) : "all", std::nullopt,
                          fmt::format("{} over {} ({} cube cores at {} MHz)",
                                      pct(s.cube_utilization.value_or(0)), fmt_us(s.span_us),
                                      *c.cube_cores, *c.freq_mhz)});
  }
  const double overall = span > 0 ? cycles_sum / (span * rate) : 0;
  f.title = fmt::format("cube utilisation {} of the step (from cycle counts)", pct(overall));
  f.evidence.insert(f.evidence.begin(), {"utilization", overall, ""});
  std::vector<const TypeStat*> cube_types;
  for (const auto& t : report_.op_types) {
    if (t.cube_utilization) cube_types.push_back(&t);
  }
  std::sort(cube_types.begin(), cube_types.end(),
            [](const TypeStat* a, const TypeStat* b) { return a->total_us > b->total_us; });
  for (const TypeStat* t : cube_types) {
    if (f.ops.size() >= std::size_t(th_.max_ops_listed)) break;
    f.ops.push_back(t->type);
    f.evidence.push_back({t->type, std::nullopt,
                          fmt::format("{} while it runs ({} total)", pct(*t->cube_utilization),
                                      fmt_us(t->total_us))});
  }
  f.advice = {"Low utilisation while a cube op runs points at its shapes (padding to 16x16 "
              "fractals, transposed or unaligned operands) or at memory-bound tiling",
              "Low utilisation over the step with high per-op utilisation means the cube waits "
              "for vector ops, communication or the host"};
  add_finding(std::move(f));
}

void Analyzer::check_mte2() {
  bool has = false;
  for (const auto& i : infos_) has = has || i.has_mte2;
  if (!has) {
    skip("mte2_bound", "no aic_/aiv_mte2_ratio column (the PipeUtilization metric group is "
                       "needed)");
    return;
  }
  const auto& c = report_.chip;
  if (!c.hbm_gbps) skip("mte2_bound bandwidth comparison", "chip HBM bandwidth unknown: pass --hw");
  struct Hit {
    const SigStat* s = nullptr;
    double gbps = -1;
    bool aligned = true;
    std::string align_detail;
    double at_stake = 0;
  };
  std::vector<Hit> hits;
  for (const auto& [k, s] : sigs_) {
    if (s.mte2_count == 0) continue;
    Hit h;
    h.s = &s;
    try {
      const SourcePos pos{"", 0, 0};
      const auto shapes = parse_shape_list(s.shapes, pos);
      const auto dtypes = parse_dtype_list(s.dtypes, pos);
      if (!shapes.empty() && (dtypes.size() == shapes.size() || dtypes.size() == 1)) {
        double bytes = 0;
        for (std::size_t i = 0; i < shapes.size(); ++i) {
          const DType d = dtypes.size() == 1 ? dtypes[0] : dtypes[i];
          double n = 1;
          for (auto dim : shapes[i]) n *= double(dim);
          bytes += n * dtype_bytes(d);
          if (!shapes[i].empty()) {
            const double last = double(shapes[i].back()) * dtype_bytes(d);
            if (std::fmod(last, th_.alignment_bytes) != 0) {
              h.aligned = false;
              h.align_detail += fmt::format("{}input {} last axis {} B",
                                            h.align_detail.empty() ? "" : ", ", i, last);
            }
          }
        }
        if (s.mte2_time_us > 0) h.gbps = bytes * double(s.mte2_count) / s.mte2_time_us / 1e3;
      }
    } catch (const InputError&) {
      h.gbps = -1;  // shapes unreadable: no bandwidth for this kernel
    }
    double frac = 1;
    if (h.gbps > 0 && c.hbm_gbps && *c.hbm_gbps > 0) frac = std::clamp(1 - h.gbps / *c.hbm_gbps, 0.0, 1.0);
    h.at_stake = s.mte2_duration_us * frac;
    hits.push_back(h);
  }
  if (hits.empty()) return;
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.at_stake > b.at_stake; });
  Finding f;
  f.check = "mte2_bound";
  std::uint64_t calls = 0;
  bool any_unaligned = false;
  for (const auto& h : hits) {
    calls += h.s->mte2_count;
    f.time_us += h.at_stake;
    any_unaligned = any_unaligned || !h.aligned;
    if (f.ops.size() >= std::size_t(th_.max_ops_listed)) continue;
    f.ops.push_back(h.s->first_name);
    std::string bw = h.gbps > 0 ? fmt::format("{:.0f} GB/s", h.gbps) : "bandwidth unknown";
    if (h.gbps > 0 && c.hbm_gbps) bw += fmt::format(" ({} of {:.0f} GB/s HBM)", pct(h.gbps / *c.hbm_gbps), *c.hbm_gbps);
    f.evidence.push_back({h.s->first_name, std::nullopt,
                          fmt::format("{} [{}] {}: {} MTE2-bound calls, {}; {}; {}", h.s->type,
                                      h.s->shapes, h.s->dtypes, h.s->mte2_count,
                                      fmt_us(h.s->mte2_duration_us), bw,
                                      h.aligned ? "last axes 32-byte aligned"
                                                : "NOT aligned: " + h.align_detail)});
  }
  f.title = fmt::format("{} calls of {} kernels are MTE2-bound (mte2 ratio > {})", calls,
                        hits.size(), th_.mte2_ratio);
  f.evidence.insert(f.evidence.begin(), {"calls", double(calls), ""});
  if (any_unaligned) {
    f.advice.emplace_back("Pad or regroup the last axis to a multiple of 32 bytes so each row "
                          "is moved in whole blocks");
  }
  f.advice.emplace_back("Fuse the op with its producer or consumer so the data is not loaded "
                        "from HBM again; keep hot inputs small enough to stay in L2");
  f.advice.emplace_back("Below the chip's bandwidth, the op moves data in small pieces: larger "
                        "tiles or a better format (ND vs NZ) raise the achieved rate");
  add_finding(std::move(f));
}

void Analyzer::check_idle() {
  for (const auto& i : infos_) {
    if (!i.has_start_time) {
      skip("idle_gaps", "no start-time column: no timeline");
      return;
    }
  }
  if (unordered_) {
    skip("idle_gaps", "the rows are not in start-time order within a step");
    return;
  }
  double idle = 0, span = 0;
  for (const auto& s : report_.steps) {
    idle += s.idle_us;
    span += s.span_us;
  }
  if (span <= 0) return;
  const double share = idle / span;
  if (share <= th_.idle_share) return;
  Finding f;
  f.check = "idle_gaps";
  f.title = fmt::format("the device is idle {} of the step: host-bound stretches", pct(share));
  f.time_us = idle;
  f.evidence = {{"idle_us", idle, ""}, {"span_us", span, ""}, {"idle_share", share, ""}};
  for (const auto& [g, item] : gaps_.sorted()) {
    f.ops.push_back(item.after);
    f.evidence.push_back({item.after, std::nullopt,
                          fmt::format("idle {} before it (after {}{})", fmt_us(g), item.before,
                                      item.step >= 0 ? fmt::format(", step {}", item.step) : "")});
  }
  f.advice = {"Look at the host side of the gaps (the CANN / Python tracks of the timeline): "
              "data loading, synchronisation (.item(), .cpu()), Python overhead",
              "Reduce host work per step: graph mode, fused ops, asynchronous data loading"};
  add_finding(std::move(f));
}

void Analyzer::check_pcie() {
  if (!src_.pcie) {
    skip("pcie", "no pcie_*.csv in the profile (msprof --sys-interconnection / --pcie)");
    return;
  }
  const auto& c = report_.chip;
  if (!c.pcie_gbps || *c.pcie_gbps <= 0) {
    skip("pcie", "the chip's PCIe rate is unknown: pass --hw");
    return;
  }
  const auto rows = read_pcie(*src_.pcie);
  double best = 0;
  std::string mode;
  for (const auto& r : rows) {
    if (r.mode.find("MB/s") == std::string::npos) continue;
    if (r.max > best) best = r.max, mode = r.mode;
  }
  const double achieved_gbps = best / 1000.0;  // MB/s -> GB/s (decimal units)
  const double target = c.pcie_efficiency * *c.pcie_gbps;
  if (mode.empty() || achieved_gbps >= target) return;
  Finding f;
  f.check = "pcie";
  f.severity = "info";
  f.title = fmt::format("PCIe peaks at {:.2f} GB/s, below {:.0f} % of the {:.0f} GB/s link",
                        achieved_gbps, c.pcie_efficiency * 100, *c.pcie_gbps);
  f.evidence = {{"achieved_gbps", achieved_gbps, ""}, {"mode", std::nullopt, mode},
                {"target_gbps", target, ""}};
  f.advice = {"If host-device copies matter in this workload, check the link (lspci: width and "
              "generation), use pinned host memory and larger, fewer copies"};
  add_finding(std::move(f));
}

void Analyzer::from_op_statistic() {
  const auto rows = read_op_statistic(*src_.op_statistic);
  double total = 0;
  for (const auto& r : rows) total += r.total_us;
  report_.notes.push_back("no kernel table: op types from op_statistic only; the per-op checks "
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
    report_.ops += t.count;
    report_.total_time_us += r.total_us;
    report_.op_types.push_back(t);
  }
}

Report Analyzer::run() {
  report_.profile = src_.name;
  report_.producer = src_.producer;
  for (const auto& f : src_.files()) report_.files.push_back(f.string());
  if (src_.profiler_info) {
    try {
      const auto info = read_profiler_info(*src_.profiler_info);
      report_.cann_version = info.cann_version;
    } catch (const InputError& e) {
      report_.notes.push_back(fmt::format("profiler_info not used: {}", e.what()));
    }
  }
  for (const auto& file : src_.kernel_files) {
    infos_.push_back(read_kernel_table(file, [this](const KernelRow& r) { add(r); }, src_.read));
    report_.layouts.push_back(infos_.back().layout);
    for (const auto& m : infos_.back().broken_row_messages) report_.notes.push_back(m);
    if (infos_.back().broken_rows > infos_.back().broken_row_messages.size()) {
      report_.notes.push_back(fmt::format("{}: {} broken rows skipped in all", file.string(),
                                          infos_.back().broken_rows));
    }
    for (const auto& m : infos_.back().missing_optional) {
      report_.notes.push_back(fmt::format("{}: no '{}' column", file.filename().string(), m));
    }
  }
  for (const auto& i : infos_) has_wait_column_ = has_wait_column_ || !std::count(
      i.missing_optional.begin(), i.missing_optional.end(), "Task Wait Time(us)");

  if (src_.kernel_files.empty()) {
    from_op_statistic();
  } else {
    for (auto& [k, t] : types_) {
      t.share = report_.total_time_us > 0 ? t.total_us / report_.total_time_us : 0;
      report_.op_types.push_back(t);
    }
    for (auto& [k, t] : comm_types_) report_.communication_types.push_back(t);
  }
  auto by_total = [](const TypeStat& a, const TypeStat& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.type < b.type;
  };
  std::sort(report_.op_types.begin(), report_.op_types.end(), by_total);
  if (!src_.kernel_files.empty()) {
    report_.op_statistic = op_stat_.rows();
    report_.other_device_types = op_stat_.other_device_rows();
  }
  std::sort(report_.communication_types.begin(), report_.communication_types.end(), by_total);

  // Cross-check against op_statistic when both are present.
  if (!src_.kernel_files.empty() && src_.op_statistic) {
    double stat_total = 0;
    for (const auto& r : read_op_statistic(*src_.op_statistic)) stat_total += r.total_us;
    const double mine = report_.total_time_us + report_.communication_time_us;
    if (stat_total > 0 && std::fabs(stat_total - mine) > 0.01 * stat_total &&
        std::fabs(stat_total - report_.total_time_us) > 0.01 * stat_total) {
      report_.notes.push_back(fmt::format("op_statistic total {} differs from the kernel table's "
                                          "{} (compute) / {} (with communication)",
                                          fmt_us(stat_total), fmt_us(report_.total_time_us),
                                          fmt_us(mine)));
    }
  }

  finish_steps();
  infer_chip();
  check_type_share();
  if (!src_.kernel_files.empty()) {
    check_long_ops();
    check_max_over_mean();
    check_task_wait();
    check_aicpu();
    check_cube_utilization();
    check_mte2();
    check_idle();
  }
  check_pcie();
  std::stable_sort(report_.findings.begin(), report_.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.time_us > b.time_us; });
  return std::move(report_);
}

}  // namespace

Report analyze(const ProfileSource& source, const AnalyzeOptions& options) {
  Analyzer a(source, options);
  return a.run();
}

}  // namespace npusim::profile
