// The chip files, the hw spec loader (ranges, unknown keys, cross-field checks, overlays) and
// chip name resolution. Expected figures are the research report's (INI81 and its derived peaks),
// not re-derived from the code under test.
#include "model/hw_spec.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/hw_overlay.h"

namespace fs = std::filesystem;
using npusim::HwSpec;
using npusim::InputError;
using npusim::load_hw_spec;
using npusim::VectorClass;

namespace {

const fs::path kHwDir = fs::path(NPUSIM_SOURCE_DIR) / "hw_specs";

/// A scratch folder for overlay files, removed at the end of the test case.
class ScratchDir {
 public:
  ScratchDir() {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("npusim_hw_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  [[nodiscard]] const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};


}  // namespace

TEST_CASE("every chip file in hw_specs loads and is named after its file", "[hw_spec]") {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kHwDir)) {
    if (e.path().extension() == ".toml") files.push_back(e.path());
  }
  REQUIRE(files.size() == 7);
  for (const fs::path& f : files) {
    INFO(f.string());
    const HwSpec s = load_hw_spec(f);
    CHECK(s.chip.name == f.stem().string());
    CHECK(s.source == f);
    CHECK(s.overlays.empty());
    CHECK(s.overlaid_keys.empty());
    CHECK(s.peak_cube_tflops_fp16() > 0);
  }
  CHECK(npusim::list_hw_specs({kHwDir}).size() == files.size());
}

TEST_CASE("core counts, clocks and cube peaks are the research report's figures", "[hw_spec]") {
  struct Expected {
    const char* name;
    int cube;
    int vector;
    double mhz;
    double peak_fp16_tflops;  // research table 1b, [D] from INI81
    bool split;
  };
  const Expected table[] = {
      {"ascend910b1", 24, 48, 1850, 363.7, true}, {"ascend910b2", 24, 48, 1800, 353.9, true},
      {"ascend910b3", 20, 40, 1800, 294.9, true}, {"ascend910b4", 20, 40, 1500, 245.8, true},
      {"ascend310p3", 8, 8, 1060, 69.5, false}, {"ascend910", 32, 32, 1000, 262.1, false},
      {"ascend910-30", 30, 30, 1000, 245.8, false},
  };
  for (const Expected& e : table) {
    INFO(e.name);
    const HwSpec s = load_hw_spec(kHwDir / (std::string(e.name) + ".toml"));
    CHECK(s.chip.cube_cores == e.cube);
    CHECK(s.chip.vector_cores == e.vector);
    CHECK(s.chip.freq_mhz == e.mhz);
    CHECK(s.chip.split_cores == e.split);
    CHECK(s.peak_cube_tflops_fp16() == Approx(e.peak_fp16_tflops).margin(0.1));
    CHECK(s.cycles_per_us() == e.mhz);
  }
}

TEST_CASE("the 910B3 file holds the INI81 memory sizes and rates", "[hw_spec]") {
  const HwSpec s = load_hw_spec(kHwDir / "ascend910b3.toml");
  CHECK(s.chip.soc_version == "Ascend910B3");
  CHECK(s.chip.hbm_bytes == 68719476736.0);
  CHECK(s.chip.l2_bytes == 201326592.0);
  CHECK(s.chip.l1_bytes == 524288.0);
  CHECK(s.chip.l0c_bytes == 131072.0);
  CHECK(s.chip.ub_bytes == 196608.0);
  CHECK(s.cube.fractal_m == 16);
  CHECK(s.cube.fractal_k_bytes == 32);
  CHECK(s.cube.l1_to_l0a_bytes_per_cycle == 512);
  CHECK(s.memory.gm_read_bytes_per_cycle == 32);
  CHECK(s.memory.l2_read_bytes_per_cycle == 110);
  CHECK(s.memory.gm_write_bytes_per_cycle == 64);
  CHECK(s.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kBinary)] == 2);
  CHECK(s.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kSigmoid)] == 13);
}

TEST_CASE("derived rates follow their documented formulas", "[hw_spec]") {
  const HwSpec s = load_hw_spec(kHwDir / "ascend910b3.toml");
  // 1600 GB/s x 0.79 = 1264 GB/s = 1'264'000 B/us; L2 8000 GB/s x 0.35 = 2'800'000 B/us.
  CHECK(s.hbm_bytes_per_us() == Approx(1264000.0));
  CHECK(s.l2_bytes_per_us() == Approx(2800000.0));
  // 40 AIV x 128 fp16 lanes / 2 cycles per binary repeat x 1.8e9 Hz = 4.608e12 op/s.
  CHECK(s.peak_vector_tops_fp16() == Approx(4.608));
  // The 310P3's effective bandwidth: 204 GB/s x 0.79 = 161.16 GB/s.
  CHECK(load_hw_spec(kHwDir / "ascend310p3.toml").hbm_bytes_per_us() == Approx(161160.0));
}

TEST_CASE("every vector class has a distinct TOML name", "[hw_spec]") {
  std::set<std::string> names;
  for (std::size_t i = 0; i < npusim::kVectorClassCount; ++i) {
    names.insert(vector_class_name(static_cast<VectorClass>(i)));
  }
  CHECK(names.size() == npusim::kVectorClassCount);
  CHECK(names.count("unknown") == 0);
  CHECK(std::string(vector_class_name(VectorClass::kMultiplyAdd)) == "multiply_add");
}

TEST_CASE("overlays apply in order and record the keys they set", "[hw_spec][overlay]") {
  ScratchDir tmp;
  const fs::path a = tmp.write("a.toml",
                               "[meta]\nfitted_from = \"op_summary_0.csv\"\n"
                               "[cube]\nefficiency = 0.72\n"
                               "[vector.cycles_per_repeat]\nsigmoid = 11\n");
  const fs::path b = tmp.write("b.toml", "[cube]\nefficiency = 0.7\n[host]\nlaunch_aclnn_us = 5\n");
  const HwSpec base = load_hw_spec(kHwDir / "ascend910b3.toml");
  const HwSpec s = load_hw_spec(kHwDir / "ascend910b3.toml", {a, b});
  CHECK(s.cube.efficiency == 0.7);  // the later overlay wins
  CHECK(s.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kSigmoid)] == 11);
  CHECK(s.host.launch_aclnn_us == 5);
  CHECK(s.cube.transposed_a_efficiency == base.cube.transposed_a_efficiency);
  CHECK(s.memory.hbm_bandwidth_gbps == base.memory.hbm_bandwidth_gbps);
  CHECK(s.overlays == std::vector<fs::path>{a, b});
  CHECK(s.overlaid_keys == std::vector<std::string>{"cube.efficiency",
                                                    "vector.cycles_per_repeat.sigmoid",
                                                    "host.launch_aclnn_us"});
}

TEST_CASE("an overlay checked alone reports the keys it sets", "[hw_spec][overlay]") {
  ScratchDir tmp;
  const fs::path a =
      tmp.write("a.toml", "[memory]\nhbm_efficiency = 0.8\nread_latency_cycles = 900\n");
  CHECK(npusim::check_hw_overlay(a) ==
        std::vector<std::string>{"memory.hbm_efficiency", "memory.read_latency_cycles"});
  // Cross-field limits need a chip: a ratio the 910B3 cannot give is fine alone.
  CHECK(npusim::check_hw_overlay(npusim::test::bad_file("hw_overlay_mix_ratio.toml")) ==
        std::vector<std::string>{"cube.mix_vector_ratio"});
}

TEST_CASE("a chip resolves from any spelling of its name or its soc_version", "[hw_spec]") {
  const fs::path want = kHwDir / "ascend910b3.toml";
  for (const char* spelling : {"ascend910b3", "910b3", "Ascend910B3", "ASCEND910B3", "910B3"}) {
    INFO(spelling);
    CHECK(npusim::resolve_hw_spec(spelling, {kHwDir}) == want);
  }
  CHECK(npusim::resolve_hw_spec(want.string(), {kHwDir}) == want);
  CHECK(npusim::resolve_hw_spec("310p3", {kHwDir}) == kHwDir / "ascend310p3.toml");
}

TEST_CASE("the first search directory that has a chip wins", "[hw_spec]") {
  ScratchDir tmp;
  fs::copy_file(kHwDir / "ascend910b4.toml", tmp.path() / "ascend910b4.toml");
  const auto files = npusim::list_hw_specs({tmp.path(), kHwDir});
  REQUIRE(files.size() == 7);
  CHECK(npusim::resolve_hw_spec("910b4", {tmp.path(), kHwDir}) == tmp.path() / "ascend910b4.toml");
  CHECK(files[6] == tmp.path() / "ascend910b4.toml");  // sorted by name; b4 is last
}

TEST_CASE("an unknown chip name lists the known chips", "[hw_spec]") {
  CHECK_THROWS_WITH(npusim::resolve_hw_spec("910c", {kHwDir}),
                    "<command line>: error: unknown chip '910c'; known chips: ascend310p3, "
                    "ascend910, ascend910-30, ascend910b1, ascend910b2, ascend910b3, ascend910b4");
  CHECK_THROWS_WITH(npusim::resolve_hw_spec("specs/none.toml", {kHwDir}),
                    "specs/none.toml: error: cannot open file: no such file");
}

TEST_CASE("each bad chip file fails with its exact diagnostic", "[hw_spec][bad]") {
  struct Case {
    const char* file;
    const char* message;  // after "<path>"
  };
  const Case cases[] = {
      {"hw_malformed.toml",
       ":2:6: error: Error while parsing table header: expected ']', saw '\\n'"},
      {"hw_empty.toml",
       ": error: file is empty (no TOML tables); expected a hw spec with [chip] or an overlay"},
      {"hw_wrong_type.toml",
       ":8:14: error: [chip].cube_cores: expected an integer in [1, 65536], got a string"},
      {"hw_integer_is_float.toml",
       ":32:10: error: [cube].tile_m: expected an integer in [1, 65536], got a float"},
      {"hw_out_of_range.toml",
       ":27:14: error: [cube].efficiency: expected a number in (0, 1], got 1.7"},
      {"hw_nan.toml",
       ":76:18: error: [memory].hbm_efficiency: expected a finite number in (0, 1], got nan"},
      {"hw_unknown_key.toml",
       ":29:1: error: [cube]: unknown key 'eficiency'; accepted keys: context_l2_factor, "
       "conv_efficiency, divisor_block_split, efficiency, "
       "fixpipe_bytes_per_cycle, fp32_rate_factor, fractal_k_bytes, fractal_m, fractal_n, "
       "gm_to_l1_bytes_per_cycle, int8_rate_factor, l1_to_l0a_bytes_per_cycle, "
       "l1_to_l0b_bytes_per_cycle, macs_per_cycle_fp16, mix_vector_ratio, "
       "nd2nz_inline_max_elements, nd2nz_load_factor, nz_efficiency, split_k_chunk_bytes, "
       "split_k_min_k, tile_m, tile_n, transposed_a_efficiency"},
      {"hw_unknown_section.toml",
       ":121:2: error: top level: unknown key 'cubee'; accepted keys: aicpu, chip, cube, host, "
       "memory, overhead, pcie, vector"},
      {"hw_missing_key.toml", ":3:1: error: [chip]: missing required key 'freq_mhz'"},
      {"hw_missing_section.toml", ":1:1: error: top level: missing required table [pcie]"},
      {"hw_missing_cycles_class.toml",
       ":57:1: error: [vector.cycles_per_repeat]: missing required key 'erf'"},
      {"hw_name_mismatch.toml",
       ":4:8: error: [chip].name: must equal the file name stem 'hw_name_mismatch', got "
       "'ascend910b3'"},
      {"hw_not_power_of_two.toml",
       ":21:13: error: [cube].fractal_m: expected a power of two, got 24"},
      {"hw_coupled_mismatch.toml",
       ":9:16: error: [chip].vector_cores: a coupled chip (split_cores = false) has one vector "
       "unit per AI core, so vector_cores must equal cube_cores (20), got 40"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    CHECK_THROWS_WITH(load_hw_spec(npusim::test::bad_file(c.file)), npusim::test::bad_file(c.file) + c.message);
  }
  CHECK_THROWS_WITH(load_hw_spec(npusim::test::bad_file("no_such_file.toml")),
                    npusim::test::bad_file("no_such_file.toml") + ": error: cannot open file: no such file");
}

TEST_CASE("each bad overlay fails at its own file and line", "[hw_spec][bad][overlay]") {
  const fs::path chip = kHwDir / "ascend910b3.toml";
  struct Case {
    const char* file;
    const char* message;
  };
  const Case cases[] = {
      {"hw_overlay_out_of_range.toml",
       ":6:18: error: [memory].hbm_efficiency: expected a number in (0, 1], got 1.25"},
      {"hw_overlay_meta_not_string.toml",
       ":3:8: error: [meta].rows: expected a string, got an integer"},
      {"hw_overlay_unknown_key.toml",
       ":3:1: error: [memory]: unknown key 'hbm_eficiency'; accepted keys: atomic_add_cycles, "
       "atomic_region_bytes, block_bytes, "
       "gm_read_bytes_per_cycle, gm_write_bytes_per_cycle, hbm_bandwidth_gbps, hbm_efficiency, "
       "hbm_turnaround, hbm_write_factor, l2_bandwidth_gbps, l2_efficiency, "
       "l2_hit_ratio_default, l2_read_bytes_per_cycle, mte2_setup_cycles, mte3_setup_cycles, "
       "read_latency_cycles, read_stream_share, row_dma_bytes_per_cycle, strided_burst_cycles, "
       "unaligned_row_cycles, write_latency_cycles, write_stream_share"},
      {"hw_overlay_with_chip.toml",
       ":5:1: error: [chip]: an overlay cannot change the chip itself (a file with [chip] is a hw "
       "spec, not an overlay)"},
      {"hw_overlay_mix_ratio.toml",
       ":3:20: error: [cube].mix_vector_ratio: expected at most vector_cores / cube_cores = 2, "
       "got 3"},
      {"hw_empty.toml",
       ": error: file is empty (no TOML tables); expected a hw spec with [chip] or an overlay"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    CHECK_THROWS_WITH(load_hw_spec(chip, {npusim::test::bad_file(c.file)}), npusim::test::bad_file(c.file) + c.message);
  }
}
