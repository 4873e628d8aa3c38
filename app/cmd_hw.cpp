// `npusim hw list` and `npusim hw show NAME [--overlay F]... [--json]`: what the model believes
// about a chip, every value with its unit, where it came from, and the peaks derived from it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <algorithm>
#include <vector>

#include "app/common.h"
#include "model/error.h"
#include "model/hw_spec.h"
#include "model/toml_reader.h"

namespace npusim::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// One effective value of the spec: the TOML section and key it is read from, its value and
/// the unit a user reads it in.
struct Row {
  std::string section;
  std::string key;
  json value;
  std::string unit;
};

/// A figure computed from the spec (not in any file), with its unit.
struct Derived {
  std::string key;
  std::string label;
  double value;
  std::string unit;
};

std::vector<Row> spec_rows(const HwSpec& s) {
  std::vector<Row> r;
  auto add = [&r](const char* section, const char* key, json value, const char* unit) {
    r.push_back(Row{section, key, std::move(value), unit});
  };
  const ChipSpec& c = s.chip;
  add("chip", "name", c.name, "");
  add("chip", "display_name", c.display_name, "");
  add("chip", "soc_version", c.soc_version, "");
  add("chip", "split_cores", c.split_cores, "");
  add("chip", "cube_cores", c.cube_cores, "cores");
  add("chip", "vector_cores", c.vector_cores, "cores");
  add("chip", "aicpu_cores", c.aicpu_cores, "cores");
  add("chip", "freq_mhz", c.freq_mhz, "MHz");
  add("chip", "hbm_bytes", c.hbm_bytes, "B");
  add("chip", "l2_bytes", c.l2_bytes, "B");
  add("chip", "l1_bytes", c.l1_bytes, "B");
  add("chip", "l0a_bytes", c.l0a_bytes, "B");
  add("chip", "l0b_bytes", c.l0b_bytes, "B");
  add("chip", "l0c_bytes", c.l0c_bytes, "B");
  add("chip", "ub_bytes", c.ub_bytes, "B");
  const CubeSpec& q = s.cube;
  add("cube", "fractal_m", q.fractal_m, "elements");
  add("cube", "fractal_n", q.fractal_n, "elements");
  add("cube", "fractal_k_bytes", q.fractal_k_bytes, "B");
  add("cube", "macs_per_cycle_fp16", q.macs_per_cycle_fp16, "MAC/cycle/core");
  add("cube", "int8_rate_factor", q.int8_rate_factor, "x fp16");
  add("cube", "fp32_rate_factor", q.fp32_rate_factor, "x fp16");
  add("cube", "efficiency", q.efficiency, "of peak");
  add("cube", "transposed_a_efficiency", q.transposed_a_efficiency, "factor");
  add("cube", "nz_efficiency", q.nz_efficiency, "factor");
  add("cube", "conv_efficiency", q.conv_efficiency, "factor");
  add("cube", "tile_m", q.tile_m, "elements");
  add("cube", "tile_n", q.tile_n, "elements");
  add("cube", "l1_to_l0a_bytes_per_cycle", q.l1_to_l0a_bytes_per_cycle, "B/cycle");
  add("cube", "l1_to_l0b_bytes_per_cycle", q.l1_to_l0b_bytes_per_cycle, "B/cycle");
  add("cube", "fixpipe_bytes_per_cycle", q.fixpipe_bytes_per_cycle, "B/cycle");
  add("cube", "gm_to_l1_bytes_per_cycle", q.gm_to_l1_bytes_per_cycle, "B/cycle");
  add("cube", "nd2nz_load_factor", q.nd2nz_load_factor, "factor");
  add("cube", "context_l2_factor", q.context_l2_factor, "x context L2 hits");
  add("cube", "mix_vector_ratio", q.mix_vector_ratio, "AIV per AIC");
  add("cube", "nd2nz_inline_max_elements", q.nd2nz_inline_max_elements, "elements (0 = off)");
  add("cube", "split_k_min_k", q.split_k_min_k, "elements (0 = off)");
  add("cube", "split_k_chunk_bytes", q.split_k_chunk_bytes, "B");
  add("cube", "divisor_block_split", q.divisor_block_split, "");
  const VectorSpec& v = s.vector;
  add("vector", "repeat_bytes", v.repeat_bytes, "B");
  add("vector", "api_overhead_cycles", v.api_overhead_cycles, "cycles");
  add("vector", "tik_issue_cycles", v.tik_issue_cycles, "cycles");
  add("vector", "scalar_cycles_per_element", v.scalar_cycles_per_element, "cycles/element");
  add("vector", "scalar_cycles_per_index", v.scalar_cycles_per_index, "cycles/index");
  add("vector", "min_bytes_per_core", v.min_bytes_per_core, "B");
  add("vector", "ub_buffers", v.ub_buffers, "buffers");
  add("vector", "bf16_arithmetic", v.bf16_arithmetic, "");
  for (std::size_t i = 0; i < kVectorClassCount; ++i) {
    r.push_back(Row{"vector.cycles_per_repeat", vector_class_name(static_cast<VectorClass>(i)),
                    v.cycles_per_repeat[i], "cycles/repeat"});
  }
  const MemorySpec& m = s.memory;
  add("memory", "hbm_bandwidth_gbps", m.hbm_bandwidth_gbps, "GB/s");
  add("memory", "hbm_efficiency", m.hbm_efficiency, "of nominal");
  add("memory", "hbm_write_factor", m.hbm_write_factor, "x read rate");
  add("memory", "hbm_turnaround", m.hbm_turnaround, "per byte of the smaller stream");
  add("memory", "l2_bandwidth_gbps", m.l2_bandwidth_gbps, "GB/s");
  add("memory", "l2_efficiency", m.l2_efficiency, "of nominal");
  add("memory", "l2_hit_ratio_default", m.l2_hit_ratio_default, "ratio");
  add("memory", "gm_read_bytes_per_cycle", m.gm_read_bytes_per_cycle, "B/cycle/core");
  add("memory", "l2_read_bytes_per_cycle", m.l2_read_bytes_per_cycle, "B/cycle/core");
  add("memory", "gm_write_bytes_per_cycle", m.gm_write_bytes_per_cycle, "B/cycle/core");
  add("memory", "block_bytes", m.block_bytes, "B");
  add("memory", "read_latency_cycles", m.read_latency_cycles, "cycles");
  add("memory", "write_latency_cycles", m.write_latency_cycles, "cycles");
  add("memory", "read_stream_share", m.read_stream_share, "");
  add("memory", "write_stream_share", m.write_stream_share, "");
  add("memory", "mte2_setup_cycles", m.mte2_setup_cycles, "cycles");
  add("memory", "mte3_setup_cycles", m.mte3_setup_cycles, "cycles");
  add("memory", "row_dma_bytes_per_cycle", m.row_dma_bytes_per_cycle, "B/cycle");
  add("memory", "atomic_add_cycles", m.atomic_add_cycles, "cycles");
  add("memory", "atomic_region_bytes", m.atomic_region_bytes, "B");
  add("memory", "unaligned_row_cycles", m.unaligned_row_cycles, "cycles/row");
  add("memory", "strided_burst_cycles", m.strided_burst_cycles, "cycles/burst");
  const OverheadSpec& o = s.overhead;
  add("overhead", "launch_cycles", o.launch_cycles, "cycles");
  add("overhead", "per_block_cycles", o.per_block_cycles, "cycles/block");
  add("overhead", "conflict_coefficient", o.conflict_coefficient, "factor");
  add("overhead", "index_dup_ratio_default", o.index_dup_ratio_default, "ratio");
  add("overhead", "scheduler_task_us", o.scheduler_task_us, "us");
  const HostSpec& h = s.host;
  add("host", "launch_aclnn_us", h.launch_aclnn_us, "us");
  add("host", "launch_aclop_us", h.launch_aclop_us, "us");
  add("host", "recompile_us", h.recompile_us, "us");
  add("host", "dynamic_shape_sync_us", h.dynamic_shape_sync_us, "us");
  add("host", "ns_per_element", h.ns_per_element, "ns/element");
  add("host", "launch_queue_depth", h.launch_queue_depth, "launches");
  add("host", "cores", h.cores, "cores");
  add("aicpu", "dispatch_us", s.aicpu.dispatch_us, "us");
  add("aicpu", "ns_per_element", s.aicpu.ns_per_element, "ns/element");
  add("pcie", "bandwidth_gbps", s.pcie.bandwidth_gbps, "GB/s");
  add("pcie", "efficiency", s.pcie.efficiency, "of nominal");
  add("pcie", "latency_us", s.pcie.latency_us, "us");
  return r;
}

// Per-core DMA rates: B/cycle x MHz = 1e6 B/s; / 1e3 gives GB/s.
double per_core_gbps(double bytes_per_cycle, double freq_mhz) {
  return bytes_per_cycle * freq_mhz / 1e3;
}

std::vector<Derived> derived_figures(const HwSpec& s) {
  const double peak = s.peak_cube_tflops_fp16();
  const double mhz = s.chip.freq_mhz;
  return {
      {"peak_cube_tflops_fp16", "peak cube fp16/bf16", peak, "TFLOP/s"},
      {"peak_cube_tops_int8", "peak cube int8", peak * s.cube.int8_rate_factor, "TOP/s"},
      {"peak_cube_tflops_fp32", "peak cube fp32/hf32", peak * s.cube.fp32_rate_factor, "TFLOP/s"},
      {"peak_vector_tops_fp16", "peak vector fp16 (binary ops)", s.peak_vector_tops_fp16(),
       "Tops/s"},
      {"hbm_effective_gbps", "HBM effective (nominal x efficiency)", s.hbm_bytes_per_us() / 1e3,
       "GB/s"},
      {"l2_gbps", "L2", s.l2_bytes_per_us() / 1e3, "GB/s"},
      {"mte2_gm_read_gbps_per_core", "MTE2 per core, GM read",
       per_core_gbps(s.memory.gm_read_bytes_per_cycle, mhz), "GB/s"},
      {"mte2_l2_read_gbps_per_core", "MTE2 per core, L2 hit",
       per_core_gbps(s.memory.l2_read_bytes_per_cycle, mhz), "GB/s"},
      {"mte3_gm_write_gbps_per_core", "MTE3 per core, GM write",
       per_core_gbps(s.memory.gm_write_bytes_per_cycle, mhz), "GB/s"},
      {"cube_gm_to_l1_gbps_per_core", "cube GM->L1 per core",
       per_core_gbps(s.cube.gm_to_l1_bytes_per_cycle, mhz), "GB/s"},
      {"clock_period_ns", "clock period", 1e3 / mhz, "ns"},
  };
}

/// For each key an overlay set, the last overlay file that sets it (later overlays win).
std::map<std::string, std::string> overlay_sources(const HwSpec& s) {
  std::map<std::string, std::string> out;
  for (const fs::path& f : s.overlays) {
    const TomlFile doc = parse_toml_file(f);
    for (const std::string& key : s.overlaid_keys) {
      if (doc.root.at_path(key)) out[key] = f.string();
    }
  }
  return out;
}

std::string format_value(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return fmt::format("{}", v.get<std::int64_t>());
  return fmt::format("{}", v.get<double>());
}

// 68719476736 -> "64 GiB": byte counts are easier to check in binary units.
std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:.4g} {}", bytes, units[u]);
}

std::string show_text(const HwSpec& s) {
  const auto sources = overlay_sources(s);
  std::string out =
      fmt::format("{} ({})\nsource: {}\n", s.chip.display_name, s.chip.name, s.source.string());
  for (const fs::path& f : s.overlays) out += fmt::format("overlay: {}\n", f.string());
  std::string section;
  for (const Row& r : spec_rows(s)) {
    if (r.section != section) {
      section = r.section;
      out += fmt::format("\n[{}]\n", section);
    }
    std::string line = fmt::format("  {:<28} {}", r.key, format_value(r.value));
    if (!r.unit.empty()) line += " " + r.unit;
    if (r.unit == "B" && r.value.get<double>() >= 1024) {
      line += fmt::format(" ({})", human_bytes(r.value.get<double>()));
    }
    if (const auto it = sources.find(r.section + "." + r.key); it != sources.end()) {
      line += fmt::format("  (overlay: {})", it->second);
    }
    out += line + "\n";
  }
  out += "\nderived\n";
  for (const Derived& d : derived_figures(s)) {
    out += fmt::format("  {:<38} {:.4g} {}\n", d.label, d.value, d.unit);
  }
  return out;
}

json show_json(const HwSpec& s) {
  json j;
  j["name"] = s.chip.name;
  j["source"] = s.source.string();
  j["overlays"] = json::array();
  for (const fs::path& f : s.overlays) j["overlays"].push_back(f.string());
  j["overlaid"] = json::object();
  for (const auto& [key, file] : overlay_sources(s)) j["overlaid"][key] = file;
  json sections = json::object();
  for (const Row& r : spec_rows(s)) {
    sections[json::json_pointer("/" + r.section + "/" + r.key)] = r.value;
  }
  // "vector.cycles_per_repeat" rows land under vector / cycles_per_repeat, as in the TOML file.
  if (sections.contains("vector.cycles_per_repeat")) {
    sections["vector"]["cycles_per_repeat"] = sections["vector.cycles_per_repeat"];
    sections.erase("vector.cycles_per_repeat");
  }
  j["spec"] = sections;
  json derived = json::object();
  for (const Derived& d : derived_figures(s)) derived[d.key] = d.value;
  j["derived"] = derived;
  return j;
}

void run_list() {
  std::optional<InputError> first_error;
  std::vector<HwSpec> specs;
  std::vector<std::string> sources;
  std::size_t name_w = 13, display_w = 14;  // the columns fit the longest name and display name
  for (const fs::path& f : list_hw_specs(hw_spec_dirs())) {
    try {
      specs.push_back(load_hw_spec(f));
      sources.push_back(f.string());
      name_w = std::max(name_w, specs.back().chip.name.size());
      display_w = std::max(display_w, specs.back().chip.display_name.size());
    } catch (const InputError& e) {
      // List the good chips, then fail on the broken file so a user sees both.
      if (!first_error) first_error = e;
    }
  }
  std::string out = fmt::format("{:<{}} {:<{}} {:>5} {:>7} {:>6} {:>9}  {}\n", "name", name_w,
                                "display", display_w, "cube", "vector", "MHz", "HBM", "source");
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const HwSpec& s = specs[i];
    out += fmt::format("{:<{}} {:<{}} {:>5} {:>7} {:>6} {:>9}  {}\n", s.chip.name, name_w,
                       s.chip.display_name, display_w, s.chip.cube_cores, s.chip.vector_cores,
                       s.chip.freq_mhz, human_bytes(s.chip.hbm_bytes), sources[i]);
  }
  std::cout << out;
  if (first_error) throw *first_error;
}

}  // namespace

void register_hw(CLI::App& app) {
  CLI::App* hw = app.add_subcommand("hw", "List the known chips and show a chip's effective spec");
  hw->require_subcommand(1);

  CLI::App* list = hw->add_subcommand(
      "list", "One line per chip in hw_specs/: name, cores, clock, HBM size, file");
  list->callback([] { run_list(); });

  struct ShowOptions {
    std::string chip;
    std::vector<std::string> overlays;
    bool json = false;
  };
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* show = hw->add_subcommand(
      "show", "Every effective value of a chip by section with units, then derived peaks");
  show->add_option("chip", opts->chip, "chip name (ascend910b3, 910b3, Ascend910B3) or file")
      ->required();
  show->add_option("--overlay", opts->overlays,
                   "overlay TOML applied on top of the chip, in order (repeatable)")
      ->allow_extra_args(false);
  show->add_flag("--json", opts->json, "print one JSON object instead of text");
  show->callback([opts] {
    const HwSpec s = load_hw(opts->chip, opts->overlays);
    std::cout << (opts->json ? show_json(s).dump(2) + "\n" : show_text(s));
  });
}

}  // namespace npusim::app
