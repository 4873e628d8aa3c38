// `npusim hw list`, `npusim hw show` and `npusim validate` run as a user runs them.
#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.h"
#include "model/hw_spec.h"
#include "tests/app/cli_runner.h"

namespace fs = std::filesystem;
using npusim::test::run_cli;

namespace {

const fs::path kHwDir = fs::path(NPUSIM_SOURCE_DIR) / "hw_specs";


/// The library's diagnostic for a chip file (and overlays), as the CLI must print it.
std::string library_error(const fs::path& chip, const std::vector<fs::path>& overlays = {}) {
  try {
    (void)npusim::load_hw_spec(chip, overlays);
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("hw list shows every chip with its cores and clock, in aligned columns", "[cli][hw]") {
  const auto r = run_cli("hw list");
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"ascend910b1", "ascend910b2", "ascend910b3", "ascend910b4",
                           "ascend310p3", "ascend910", "ascend910-30"}) {
    CHECK(r.out.find(name) != std::string::npos);
  }
  // The display column is as wide as the longest display name ("Ascend 910 (30 cores)", 21).
  CHECK(r.out.find("Ascend 910B3             20      40   1800") != std::string::npos);
  CHECK(r.out.find("Ascend 910 (30 cores)    30      30   1000") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("hw show prints the chip's peak fp16 figure", "[cli][hw]") {
  const auto r = run_cli("hw show 910b3");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("peak cube fp16/bf16                    294.9 TFLOP/s") != std::string::npos);
  CHECK(r.out.find("  freq_mhz                     1800 MHz") != std::string::npos);
  CHECK(r.out.find("(overlay:") == std::string::npos);
}

TEST_CASE("hw show marks the values an overlay set", "[cli][hw][overlay]") {
  const fs::path overlay =
      fs::temp_directory_path() / ("npusim_cli_hw_overlay_" + std::to_string(::getpid()) + ".toml");
  std::ofstream(overlay) << "[meta]\nsource = \"test\"\n[cube]\nefficiency = 0.72\n";
  const auto r = run_cli("hw show Ascend910B3 --overlay " + overlay.string());
  fs::remove(overlay);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("  efficiency                   0.72 of peak  (overlay: " + overlay.string() +
                   ")") != std::string::npos);
  CHECK(r.out.find("  transposed_a_efficiency      0.65 factor\n") != std::string::npos);
}

TEST_CASE("hw show --json gives the spec, the overlaid keys and the derived peaks", "[cli][hw]") {
  const auto r = run_cli("hw show ascend310p3 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["name"] == "ascend310p3");
  CHECK(j["spec"]["chip"]["cube_cores"] == 8);
  CHECK(j["spec"]["vector"]["cycles_per_repeat"]["erf"] == 90.0);
  CHECK(j["derived"]["peak_cube_tflops_fp16"].get<double>() == Approx(69.5).margin(0.1));
  CHECK(j["overlaid"].empty());
}

TEST_CASE("hw show of an unknown chip exits 2 naming the known chips", "[cli][hw]") {
  const auto r = run_cli("hw show 910c");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown chip '910c'; known chips: ascend310p3, ") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("validate accepts every chip file and a good overlay", "[cli][validate]") {
  const auto r =
      run_cli("validate " + (kHwDir / "ascend910b3.toml").string() + " " +
              (kHwDir / "ascend310p3.toml").string() + " " + npusim::test::bad_file("hw_overlay_mix_ratio.toml"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "ok: " + (kHwDir / "ascend910b3.toml").string() + " (hw spec ascend910b3)\n" +
                     "ok: " + (kHwDir / "ascend310p3.toml").string() + " (hw spec ascend310p3)\n" +
                     "ok: " + npusim::test::bad_file("hw_overlay_mix_ratio.toml") +
                     " (hw overlay, sets cube.mix_vector_ratio)\n");
}

TEST_CASE("validate of each bad chip file exits 2 with the library's message", "[cli][validate]") {
  for (const char* name :
       {"hw_malformed.toml", "hw_empty.toml", "hw_wrong_type.toml", "hw_integer_is_float.toml",
        "hw_out_of_range.toml", "hw_nan.toml", "hw_unknown_key.toml", "hw_unknown_section.toml",
        "hw_missing_key.toml", "hw_missing_section.toml", "hw_missing_cycles_class.toml",
        "hw_name_mismatch.toml", "hw_not_power_of_two.toml", "hw_coupled_mismatch.toml"}) {
    INFO(name);
    const auto r = run_cli("validate " + npusim::test::bad_file(name));
    CHECK(r.exit_code == 2);
    CHECK(r.err == library_error(npusim::test::bad_file(name)) + "\n");
    CHECK(r.out.empty());
  }
}

TEST_CASE("bad overlays fail the same way in validate and in hw show", "[cli][validate]") {
  const fs::path chip = kHwDir / "ascend910b3.toml";
  for (const char* name : {"hw_overlay_out_of_range.toml", "hw_overlay_meta_not_string.toml",
                           "hw_overlay_unknown_key.toml"}) {
    INFO(name);
    const std::string expected = library_error(chip, {npusim::test::bad_file(name)}) + "\n";
    const auto v = run_cli("validate " + npusim::test::bad_file(name));
    CHECK(v.exit_code == 2);
    CHECK(v.err == expected);
    const auto s = run_cli("hw show 910b3 --overlay " + npusim::test::bad_file(name));
    CHECK(s.exit_code == 2);
    CHECK(s.err == expected);
  }
  // Needs the chip to fail: only hw show sees it.
  const auto s = run_cli("hw show 910b3 --overlay " + npusim::test::bad_file("hw_overlay_mix_ratio.toml"));
  CHECK(s.exit_code == 2);
  CHECK(s.err == library_error(chip, {npusim::test::bad_file("hw_overlay_mix_ratio.toml")}) + "\n");
}

TEST_CASE("validate stops at the first bad file after the good ones", "[cli][validate]") {
  const auto r = run_cli("validate " + (kHwDir / "ascend910b1.toml").string() + " " +
                         npusim::test::bad_file("unknown_kind.toml") + " " + (kHwDir / "ascend910b2.toml").string());
  CHECK(r.exit_code == 2);
  CHECK(r.out == "ok: " + (kHwDir / "ascend910b1.toml").string() + " (hw spec ascend910b1)\n");
  CHECK(r.err == npusim::test::bad_file("unknown_kind.toml") +
                     ": error: unknown file kind, expected a hw spec ([chip]), an overlay (only "
                     "hw sections and [meta]), a scenario ([scenario]) or a graph ([graph])\n");
}

TEST_CASE("hw and validate print help", "[cli][hw][validate]") {
  for (const char* args : {"hw --help", "hw list --help", "hw show --help", "validate --help"}) {
    INFO(args);
    const auto r = run_cli(args);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Usage:") != std::string::npos);
  }
}
