#include "model/hw_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <system_error>
#include <utility>

#include "model/error.h"
#include "model/hw_overlay.h"
#include "model/op_desc.h"
#include "model/toml_reader.h"

namespace npusim {

namespace fs = std::filesystem;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Sanity bound on counts and sizes held in `int` fields: far above any chip, far below overflow.
constexpr std::int64_t kMaxCount = 65536;

/// A closed/open numeric range for one key.
struct Range {
  double lo;
  double hi;
  bool lo_open;
  bool hi_open;
};
constexpr Range kPositive{0, kInf, true, false};      // rates, sizes, clocks: > 0
constexpr Range kNonNegative{0, kInf, false, false};  // latencies and overheads: >= 0
constexpr Range kEfficiency{0, 1, true, false};       // fractions of a peak: (0, 1]
constexpr Range kRatio{0, 1, false, false};           // probabilities and shares: [0, 1]
constexpr Range kNzEfficiency{0, 1.5, true, false};   // NZ operands may beat the ND reference

// Chip files and overlays say the same about an empty file, whichever loader meets it first.
constexpr const char* kEmptyFileMessage =
    "file is empty (no TOML tables); expected a hw spec with [chip] or an overlay";

// The families an [intervals.NAME] table may name (model/op_desc.h), then the pooled "all".
constexpr OpFamily kIntervalFamilies[] = {
    OpFamily::kCube,  OpFamily::kElementwise, OpFamily::kReduction, OpFamily::kDataMovement,
    OpFamily::kIndex, OpFamily::kSort,        OpFamily::kAicpu,     OpFamily::kGeneric};
constexpr const char* kPooledInterval = "all";

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// Reads the spec one file at a time (the chip file, then each overlay) and remembers where each
/// "section.key" was last set, so cross-field checks point at the value that made them fail.
class Loader {
 public:
  HwSpec spec;

  void load_chip_file(const fs::path& file);
  void load_overlay(const fs::path& file);
  void check_consistency() const;

 private:
  /// One section of the file being read. In a chip file every key is required; in an overlay
  /// every key is optional and a key that is present is recorded in spec.overlaid_keys.
  class Section {
   public:
    Section(Loader& loader, TableReader reader, std::string name, bool overlay)
        : loader_(loader), reader_(std::move(reader)), name_(std::move(name)), overlay_(overlay) {}

    void number(const char* key, double& field, Range r) {
      if (overlay_) {
        const auto v = reader_.optional_number(key, r.lo, r.hi, r.lo_open, r.hi_open);
        if (!v) return;
        field = *v;
      } else {
        field = reader_.number(key, r.lo, r.hi, r.lo_open, r.hi_open);
      }
      record(key);
    }

    // A key a spec file may leave out: the field keeps its default.
    void optional_number(const char* key, double& field, Range r) {
      const auto v = reader_.optional_number(key, r.lo, r.hi, r.lo_open, r.hi_open);
      if (!v) return;
      field = *v;
      record(key);
    }

    void integer(const char* key, int& field, std::int64_t lo, bool power_of_two = false) {
      std::int64_t v = 0;
      if (overlay_) {
        const auto o = reader_.optional_integer(key, lo, kMaxCount);
        if (!o) return;
        v = *o;
      } else {
        v = reader_.integer(key, lo, kMaxCount);
      }
      if (power_of_two && !is_power_of_two(v)) {
        reader_.fail(key, fmt::format("expected a power of two, got {}", v));
      }
      field = static_cast<int>(v);
      record(key);
    }

    void boolean(const char* key, bool& field) {
      if (overlay_) {
        const auto v = reader_.optional_boolean(key);
        if (!v) return;
        field = *v;
      } else {
        field = reader_.boolean(key);
      }
      record(key);
    }

    // A flag a spec file may leave out: the field keeps its default.
    void optional_boolean(const char* key, bool& field) {
      const auto v = reader_.optional_boolean(key);
      if (!v) return;
      field = *v;
      record(key);
    }

    void text(const char* key, std::string& field) {
      std::string v;
      if (overlay_) {
        auto o = reader_.optional_string(key);
        if (!o) return;
        v = std::move(*o);
      } else {
        v = reader_.string(key);
      }
      if (v.empty()) reader_.fail(key, "expected a non-empty string");
      field = std::move(v);
      record(key);
    }

    TableReader& reader() { return reader_; }
    void finish() const { reader_.finish(); }

   private:
    void record(const char* key) {
      const std::string full = name_ + "." + key;
      loader_.where_[full] = reader_.value_pos(key);
      if (!overlay_) return;
      auto& keys = loader_.spec.overlaid_keys;
      if (std::find(keys.begin(), keys.end(), full) == keys.end()) keys.push_back(full);
    }

    Loader& loader_;
    TableReader reader_;
    std::string name_;
    bool overlay_;
  };

  /// Reads every section but [chip] from `root` (shared by chip files and overlays).
  void read_model_sections(TableReader& root, bool overlay);
  /// Reads an overlay's [intervals] table: one sub-table per family name or "all".
  void read_intervals(TableReader& table);
  std::optional<Section> section(TableReader& root, const char* name, bool overlay);
  [[noreturn]] void fail_key(const std::string& full_key, const std::string& message) const;

  std::map<std::string, SourcePos> where_;
};

std::optional<Loader::Section> Loader::section(TableReader& root, const char* name, bool overlay) {
  if (!overlay) return Section(*this, root.sub_table(name), name, false);
  auto t = root.optional_sub_table(name);
  if (!t) return std::nullopt;
  return Section(*this, std::move(*t), name, true);
}

void Loader::read_model_sections(TableReader& root, bool overlay) {
  if (auto s = section(root, "cube", overlay)) {
    CubeSpec& c = spec.cube;
    s->integer("fractal_m", c.fractal_m, 1, true);
    s->integer("fractal_n", c.fractal_n, 1, true);
    s->integer("fractal_k_bytes", c.fractal_k_bytes, 1, true);
    s->number("macs_per_cycle_fp16", c.macs_per_cycle_fp16, kPositive);
    s->number("int8_rate_factor", c.int8_rate_factor, kPositive);
    s->number("fp32_rate_factor", c.fp32_rate_factor, kPositive);
    s->number("efficiency", c.efficiency, kEfficiency);
    s->number("transposed_a_efficiency", c.transposed_a_efficiency, kEfficiency);
    s->number("nz_efficiency", c.nz_efficiency, kNzEfficiency);
    s->optional_number("conv_efficiency", c.conv_efficiency, kNzEfficiency);
    s->integer("tile_m", c.tile_m, 1);
    s->integer("tile_n", c.tile_n, 1);
    s->number("l1_to_l0a_bytes_per_cycle", c.l1_to_l0a_bytes_per_cycle, kPositive);
    s->number("l1_to_l0b_bytes_per_cycle", c.l1_to_l0b_bytes_per_cycle, kPositive);
    s->number("fixpipe_bytes_per_cycle", c.fixpipe_bytes_per_cycle, kPositive);
    s->number("gm_to_l1_bytes_per_cycle", c.gm_to_l1_bytes_per_cycle, kPositive);
    s->number("nd2nz_load_factor", c.nd2nz_load_factor, kEfficiency);
    s->optional_number("context_l2_factor", c.context_l2_factor, kRatio);
    s->number("mix_vector_ratio", c.mix_vector_ratio, kPositive);
    s->integer("nd2nz_inline_max_elements", c.nd2nz_inline_max_elements, 0);
    s->integer("split_k_min_k", c.split_k_min_k, 0);
    s->integer("split_k_chunk_bytes", c.split_k_chunk_bytes, 1);
    s->optional_boolean("divisor_block_split", c.divisor_block_split);
    s->finish();
  }
  if (auto s = section(root, "vector", overlay)) {
    VectorSpec& v = spec.vector;
    s->integer("repeat_bytes", v.repeat_bytes, 1, true);
    const bool need_cycles = !overlay;
    std::optional<TableReader> cycles_table =
        need_cycles ? std::optional<TableReader>(s->reader().sub_table("cycles_per_repeat"))
                    : s->reader().optional_sub_table("cycles_per_repeat");
    if (cycles_table) {
      Section cycles(*this, std::move(*cycles_table), "vector.cycles_per_repeat", overlay);
      for (std::size_t i = 0; i < kVectorClassCount; ++i) {
        cycles.number(vector_class_name(static_cast<VectorClass>(i)), v.cycles_per_repeat[i],
                      kPositive);
      }
      cycles.finish();
    }
    s->number("api_overhead_cycles", v.api_overhead_cycles, kNonNegative);
    s->number("tik_issue_cycles", v.tik_issue_cycles, kNonNegative);
    s->number("scalar_cycles_per_element", v.scalar_cycles_per_element, kPositive);
    s->number("scalar_cycles_per_index", v.scalar_cycles_per_index, kPositive);
    s->number("min_bytes_per_core", v.min_bytes_per_core, kPositive);
    s->number("row_reduce_sync_cycles", v.row_reduce_sync_cycles, kNonNegative);
    s->integer("ub_buffers", v.ub_buffers, 1);
    s->boolean("bf16_arithmetic", v.bf16_arithmetic);
    s->finish();
  }
  if (auto s = section(root, "memory", overlay)) {
    MemorySpec& m = spec.memory;
    s->number("hbm_bandwidth_gbps", m.hbm_bandwidth_gbps, kPositive);
    s->number("hbm_efficiency", m.hbm_efficiency, kEfficiency);
    s->number("hbm_write_factor", m.hbm_write_factor, kPositive);
    s->number("hbm_turnaround", m.hbm_turnaround, kRatio);
    s->number("l2_bandwidth_gbps", m.l2_bandwidth_gbps, kPositive);
    s->number("l2_efficiency", m.l2_efficiency, kEfficiency);
    s->number("l2_hit_ratio_default", m.l2_hit_ratio_default, kRatio);
    s->number("gm_read_bytes_per_cycle", m.gm_read_bytes_per_cycle, kPositive);
    s->number("l2_read_bytes_per_cycle", m.l2_read_bytes_per_cycle, kPositive);
    s->number("gm_write_bytes_per_cycle", m.gm_write_bytes_per_cycle, kPositive);
    s->integer("block_bytes", m.block_bytes, 1, true);
    s->number("read_latency_cycles", m.read_latency_cycles, kNonNegative);
    s->number("write_latency_cycles", m.write_latency_cycles, kNonNegative);
    s->number("read_stream_share", m.read_stream_share, kRatio);
    s->number("write_stream_share", m.write_stream_share, kRatio);
    s->number("mte2_setup_cycles", m.mte2_setup_cycles, kNonNegative);
    s->number("mte3_setup_cycles", m.mte3_setup_cycles, kNonNegative);
    s->number("row_dma_bytes_per_cycle", m.row_dma_bytes_per_cycle, kPositive);
    s->optional_number("atomic_add_cycles", m.atomic_add_cycles, kNonNegative);
    s->optional_number("unaligned_row_cycles", m.unaligned_row_cycles, kNonNegative);
    s->optional_number("strided_burst_cycles", m.strided_burst_cycles, kNonNegative);
    s->optional_number("atomic_region_bytes", m.atomic_region_bytes, kNonNegative);
    s->finish();
  }
  if (auto s = section(root, "overhead", overlay)) {
    OverheadSpec& o = spec.overhead;
    s->number("launch_cycles", o.launch_cycles, kNonNegative);
    s->number("per_block_cycles", o.per_block_cycles, kNonNegative);
    s->number("conflict_coefficient", o.conflict_coefficient, kEfficiency);
    s->number("index_dup_ratio_default", o.index_dup_ratio_default, kRatio);
    s->number("scheduler_task_us", o.scheduler_task_us, kNonNegative);
    s->finish();
  }
  if (auto s = section(root, "host", overlay)) {
    HostSpec& h = spec.host;
    s->number("launch_aclnn_us", h.launch_aclnn_us, kNonNegative);
    s->number("launch_aclop_us", h.launch_aclop_us, kNonNegative);
    s->number("recompile_us", h.recompile_us, kNonNegative);
    s->number("dynamic_shape_sync_us", h.dynamic_shape_sync_us, kNonNegative);
    s->number("ns_per_element", h.ns_per_element, kPositive);
    s->integer("launch_queue_depth", h.launch_queue_depth, 1);
    s->integer("cores", h.cores, 0);
    s->finish();
  }
  if (auto s = section(root, "aicpu", overlay)) {
    s->number("dispatch_us", spec.aicpu.dispatch_us, kNonNegative);
    s->number("ns_per_element", spec.aicpu.ns_per_element, kPositive);
    s->finish();
  }
  if (auto s = section(root, "pcie", overlay)) {
    s->number("bandwidth_gbps", spec.pcie.bandwidth_gbps, kPositive);
    s->number("efficiency", spec.pcie.efficiency, kEfficiency);
    s->number("latency_us", spec.pcie.latency_us, kNonNegative);
    s->finish();
  }
}

void Loader::read_intervals(TableReader& table) {
  std::map<std::string, ErrorInterval> out;
  std::vector<std::string> names;
  for (const OpFamily f : kIntervalFamilies) names.emplace_back(family_name(f));
  names.emplace_back(kPooledInterval);
  for (const std::string& name : names) {
    auto t = table.optional_sub_table(name);
    if (!t) continue;
    ErrorInterval e;
    e.p10 = t->number("p10", 0, kInf, true, false);
    e.p90 = t->number("p90", 0, kInf, true, false);
    e.rows = static_cast<int>(t->integer("rows", 1, std::numeric_limits<int>::max()));
    if (e.p10 > e.p90) {
      t->fail("p90", fmt::format("expected at least p10 ({}), got {}", e.p10, e.p90));
    }
    t->finish();
    out.emplace(name, e);
  }
  table.finish();
  if (out.empty()) {
    table.fail_table(fmt::format("expected at least one [intervals.NAME] table, NAME one of: {}",
                                 fmt::join(names, ", ")));
  }
  // An overlay's intervals replace any earlier ones whole: they describe its own fit.
  auto& keys = spec.overlaid_keys;
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [](const std::string& k) { return k.rfind("intervals.", 0) == 0; }),
             keys.end());
  for (const auto& [name, e] : out) keys.push_back("intervals." + name);
  spec.intervals = std::move(out);
}

void Loader::load_chip_file(const fs::path& file) {
  const TomlFile doc = parse_toml_file(file);
  if (doc.root.empty()) {
    throw InputError({doc.file, 0, 0}, kEmptyFileMessage);
  }
  TableReader root(doc);
  Section chip(*this, root.sub_table("chip"), "chip", false);
  ChipSpec& c = spec.chip;
  chip.text("name", c.name);
  const std::string stem = file.stem().string();
  if (c.name != stem) {
    chip.reader().fail("name",
                       fmt::format("must equal the file name stem '{}', got '{}'", stem, c.name));
  }
  chip.text("display_name", c.display_name);
  chip.text("soc_version", c.soc_version);
  chip.boolean("split_cores", c.split_cores);
  chip.integer("cube_cores", c.cube_cores, 1);
  chip.integer("vector_cores", c.vector_cores, 1);
  chip.integer("aicpu_cores", c.aicpu_cores, 1);
  chip.number("freq_mhz", c.freq_mhz, kPositive);
  chip.number("hbm_bytes", c.hbm_bytes, kPositive);
  chip.number("l2_bytes", c.l2_bytes, kPositive);
  chip.number("l1_bytes", c.l1_bytes, kPositive);
  chip.number("l0a_bytes", c.l0a_bytes, kPositive);
  chip.number("l0b_bytes", c.l0b_bytes, kPositive);
  chip.number("l0c_bytes", c.l0c_bytes, kPositive);
  chip.number("ub_bytes", c.ub_bytes, kPositive);
  chip.finish();
  read_model_sections(root, false);
  root.finish();
  spec.source = file;
}

void Loader::load_overlay(const fs::path& file) {
  const TomlFile doc = parse_toml_file(file);
  if (doc.root.empty()) {
    throw InputError({doc.file, 0, 0}, kEmptyFileMessage);
  }
  TableReader root(doc);
  if (root.has("chip")) {
    throw InputError(root.value_pos("chip"),
                     "[chip]: an overlay cannot change the chip itself (a file with [chip] is a hw "
                     "spec, not an overlay)");
  }
  read_model_sections(root, true);
  if (auto intervals = root.optional_sub_table("intervals")) {
    read_intervals(*intervals);
  } else if (!spec.intervals.empty()) {
    // New parameter values without intervals of their own: the earlier intervals measured the
    // error of other values, so none is claimed any more.
    bool changes_model = false;
    for (const std::string& section : hw_spec_sections()) changes_model |= root.has(section);
    if (changes_model) {
      spec.intervals.clear();
      auto& keys = spec.overlaid_keys;
      keys.erase(std::remove_if(keys.begin(), keys.end(),
                                [](const std::string& k) { return k.rfind("intervals.", 0) == 0; }),
                 keys.end());
    }
  }
  // [meta]: free-form provenance (calibration writes what it fitted, from which profile).
  if (auto meta = root.optional_sub_table("meta")) {
    for (const std::string& key : meta->keys()) (void)meta->string(key);
    meta->finish();
  }
  root.finish();
  spec.overlays.push_back(file);
}

void Loader::fail_key(const std::string& full_key, const std::string& message) const {
  const auto dot = full_key.rfind('.');
  const std::string label =
      fmt::format("[{}].{}", full_key.substr(0, dot), full_key.substr(dot + 1));
  const auto it = where_.find(full_key);
  NPUSIM_CHECK(it != where_.end());
  throw InputError(it->second, fmt::format("{}: {}", label, message));
}

void Loader::check_consistency() const {
  const ChipSpec& c = spec.chip;
  if (!c.split_cores && c.vector_cores != c.cube_cores) {
    fail_key("chip.vector_cores",
             fmt::format("a coupled chip (split_cores = false) has one vector unit per AI core, "
                         "so vector_cores must equal cube_cores ({}), got {}",
                         c.cube_cores, c.vector_cores));
  }
  const double max_ratio = static_cast<double>(c.vector_cores) / c.cube_cores;
  if (spec.cube.mix_vector_ratio > max_ratio) {
    fail_key("cube.mix_vector_ratio",
             fmt::format("expected at most vector_cores / cube_cores = {}, got {}", max_ratio,
                         spec.cube.mix_vector_ratio));
  }
  if (spec.cube.tile_m % spec.cube.fractal_m != 0) {
    fail_key("cube.tile_m", fmt::format("expected a multiple of fractal_m ({}), got {}",
                                        spec.cube.fractal_m, spec.cube.tile_m));
  }
  if (spec.cube.tile_n % spec.cube.fractal_n != 0) {
    fail_key("cube.tile_n", fmt::format("expected a multiple of fractal_n ({}), got {}",
                                        spec.cube.fractal_n, spec.cube.tile_n));
  }
  if (spec.vector.repeat_bytes % spec.memory.block_bytes != 0) {
    fail_key("vector.repeat_bytes",
             fmt::format("expected a multiple of memory.block_bytes ({}), got {}",
                         spec.memory.block_bytes, spec.vector.repeat_bytes));
  }
  if (c.l2_bytes >= c.hbm_bytes) {
    fail_key("chip.l2_bytes",
             fmt::format("expected less than hbm_bytes ({}), got {}", c.hbm_bytes, c.l2_bytes));
  }
}

// The chip's soc_version when `file` is a readable TOML file with one; resolve_hw_spec matches
// names against it, and a broken file simply does not match (it is reported when loaded).
std::optional<std::string> peek_soc_version(const fs::path& file) {
  try {
    const TomlFile doc = parse_toml_file(file);
    if (const auto* v = doc.root["chip"]["soc_version"].as_string()) return v->get();
  } catch (const InputError&) {
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& hw_spec_sections() {
  static const std::vector<std::string> kSections{"chip",     "cube", "vector", "memory",
                                                  "overhead", "host", "aicpu",  "pcie"};
  return kSections;
}

const std::vector<std::string>& hw_overlay_sections() {
  static const std::vector<std::string> kSections{
      "cube", "vector", "memory", "overhead", "host", "aicpu", "pcie", "intervals", "meta"};
  return kSections;
}

std::vector<std::string> check_hw_overlay(const fs::path& file) {
  Loader loader;
  loader.load_overlay(file);
  return std::move(loader.spec.overlaid_keys);
}

const char* vector_class_name(VectorClass c) noexcept {
  switch (c) {
    case VectorClass::kUnary:
      return "unary";
    case VectorClass::kBinary:
      return "binary";
    case VectorClass::kConvert:
      return "convert";
    case VectorClass::kTranscendental:
      return "transcendental";
    case VectorClass::kMultiplyAdd:
      return "multiply_add";
    case VectorClass::kReduce:
      return "reduce";
    case VectorClass::kSigmoid:
      return "sigmoid";
    case VectorClass::kTanh:
      return "tanh";
    case VectorClass::kErf:
      return "erf";
    case VectorClass::kGather:
      return "gather";
    case VectorClass::kSort:
      return "sort";
    case VectorClass::kTranspose:
      return "transpose";
    case VectorClass::kMaskSelect:
      return "mask_select";
    case VectorClass::kCount:
      break;
  }
  return "unknown";
}

// 2 FLOPs per MAC; MHz x 1e6 cycles/s; 1e12 FLOP/s per TFLOP/s.
double HwSpec::peak_cube_tflops_fp16() const noexcept {
  return chip.cube_cores * cube.macs_per_cycle_fp16 * 2.0 * chip.freq_mhz * 1e6 / 1e12;
}

// One fp16 lane per 2 bytes of a repeat; a binary instruction (add, mul, ...) retires one repeat
// every cycles_per_repeat[binary] cycles: cores x (repeat_bytes / 2) / cycles x Hz, in 1e12/s.
double HwSpec::peak_vector_tops_fp16() const noexcept {
  const double cycles = vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kBinary)];
  return chip.vector_cores * (vector.repeat_bytes / 2.0) / cycles * chip.freq_mhz * 1e6 / 1e12;
}

// GB/s = 1e9 B/s = 1e3 B/us.
HwSpec load_hw_spec(const fs::path& file, const std::vector<fs::path>& overlays) {
  Loader loader;
  loader.load_chip_file(file);
  loader.check_consistency();
  for (const fs::path& overlay : overlays) {
    loader.load_overlay(overlay);
    loader.check_consistency();
  }
  return std::move(loader.spec);
}

std::vector<fs::path> list_hw_specs(const std::vector<fs::path>& search_dirs) {
  std::map<std::string, fs::path> by_name;
  for (const fs::path& dir : search_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".toml" && entry.is_regular_file(ec)) {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) by_name.emplace(f.stem().string(), f);
  }
  std::vector<fs::path> out;
  out.reserve(by_name.size());
  for (auto& [name, path] : by_name) out.push_back(path);
  return out;
}

fs::path resolve_hw_spec(const std::string& name_or_path,
                         const std::vector<fs::path>& search_dirs) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const std::string wanted = lower(name_or_path);
  const std::vector<fs::path> known = list_hw_specs(search_dirs);
  for (const fs::path& f : known) {
    const std::string stem = lower(f.stem().string());
    if (stem == wanted || stem == "ascend" + wanted) return f;
  }
  for (const fs::path& f : known) {
    const auto soc = peek_soc_version(f);
    if (soc && lower(*soc) == wanted) return f;
  }
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".toml";
  if (looks_like_path) throw InputError({name_or_path, 0, 0}, "cannot open file: no such file");
  std::string names;
  for (const fs::path& f : known) names += (names.empty() ? "" : ", ") + f.stem().string();
  if (names.empty()) names = "none (no hw_specs/ directory found)";
  throw InputError({"<command line>", 0, 0},
                   fmt::format("unknown chip '{}'; known chips: {}", name_or_path, names));
}

}  // namespace npusim
