// --hw auto on crafted rows: block dims above the core count run in waves, op_summary's Block Num
// is a block dim, the clock comes from cycles over time, a coupled chip shows no vector tasks,
// and an inexact best match is reported as such.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/chip_inference.h"
#include "model/error.h"
#include "model/hw_spec.h"
#include "profile/readers.h"

namespace fs = std::filesystem;
using npusim::HwSpec;
using npusim::app::best_chip;
using npusim::app::ChipMatch;
using npusim::app::InferredChip;
using npusim::profile::KernelRow;
using npusim::profile::TaskKind;

namespace {

std::vector<HwSpec> chips() {
  std::vector<HwSpec> out;
  for (const auto& f : npusim::list_hw_specs({fs::path(NPUSIM_SOURCE_DIR) / "hw_specs"})) {
    out.push_back(npusim::load_hw_spec(f));
  }
  return out;
}

KernelRow row(TaskKind kind, const char* task_type, int block_dim, double cycles_mhz = 0,
              double util_cores = 0) {
  KernelRow r;
  r.kind = kind;
  r.task_type = task_type;
  r.block_dim = block_dim;
  r.duration_us = 10;
  if (cycles_mhz > 0) {
    // aicore_time = total_cycles / (f x block dim): msprof's own definition
    const double aic_time = 9.0;
    const double cycles = cycles_mhz * aic_time * block_dim;
    if (kind == TaskKind::kVector) {
      r.aiv_time_us = aic_time;
      r.aiv_total_cycles = cycles;
    } else {
      r.aic_time_us = aic_time;
      r.aic_total_cycles = cycles;
      // cube_utilization = cycles / (f x N_aic x duration)
      if (util_cores > 0) r.cube_utilization_pct = 100.0 * cycles / (cycles_mhz * util_cores * 10);
    }
  }
  return r;
}

std::string name_of(const InferredChip& c) {
  const auto all = chips();
  return all[best_chip(c, all).index].chip.name;
}

}  // namespace

TEST_CASE("chip inference: block dims above the core count are waves, not the core count") {
  // The CNN profile's case: 24 cube / 48 vector cores at 1800 MHz, vector kernels with 256 and
  // 96 blocks. The old rule read 256 as the vector core count and failed.
  InferredChip c;
  for (int b : {1, 8, 24}) observe_row(c, row(TaskKind::kCube, "AI_CORE", b, 1800, 24));
  for (int b : {2, 48, 96, 256}) observe_row(c, row(TaskKind::kVector, "AI_VECTOR_CORE", b, 1800));
  finish_inference(c);
  CHECK(c.freq_mhz == 1800);
  CHECK(c.cube_cores == 24);
  const auto all = chips();
  const ChipMatch m = best_chip(c, all);
  CHECK(all[m.index].chip.name == "ascend910b2");  // 910B1 fits too, at 1850 MHz: the clock decides
  CHECK(m.exact);
  CHECK(c.evidence.find("1800 MHz") != std::string::npos);
  CHECK(c.evidence.find("2,48,96,256") != std::string::npos);
}

TEST_CASE("chip inference: the clock from cycles separates two chips with the same counts") {
  InferredChip c;
  for (int b : {20, 40}) {
    observe_row(c, row(TaskKind::kCube, "AI_CORE", 20, 1500, 20));
    observe_row(c, row(TaskKind::kVector, "AI_VECTOR_CORE", b, 1500));
  }
  finish_inference(c);
  CHECK(c.freq_mhz == 1500);
  CHECK(name_of(c) == "ascend910b4");
}

TEST_CASE("chip inference: MIX rows count cube blocks and mix (vector) blocks") {
  InferredChip c;
  KernelRow mix = row(TaskKind::kMix, "MIX_AIC", 20);
  mix.mix_block_dim = 40;
  observe_row(c, mix);
  observe_row(c, row(TaskKind::kMix, "MIX_AIV", 40));
  finish_inference(c);
  CHECK(c.cube_block_dims == std::vector<int>{20});
  CHECK(c.vector_block_dims == std::vector<int>{40});
  CHECK(c.vector_rows == 2);
}

TEST_CASE("chip inference: a coupled chip shows only AI_CORE rows") {
  // The MindSpore 910 runs: AI_CORE rows with block dims up to 896 (28 waves of 32), no cycles.
  InferredChip c;
  for (int b : {1, 2, 16, 30, 32, 64, 96, 448, 896}) observe_row(c, row(TaskKind::kCube, "AI_CORE", b));
  finish_inference(c);
  const auto all = chips();
  const ChipMatch m = best_chip(c, all);
  CHECK(all[m.index].chip.name == "ascend910");
  CHECK(m.exact);
  CHECK(c.freq_rows == 0);
  CHECK(c.evidence.find("no cycle counts") != std::string::npos);
}

TEST_CASE("chip inference: the core count most launches are sized to picks a 30-core 910") {
  // The MindSpore 910 runs: most rows launch 30 blocks (the vector kernels' tilers take every
  // core), a few GEMMs 32. The 910A (32) and the 30-core part both score every item (the largest
  // block dim at or below 32 is 32, at or below 30 is 30; coupled); the rows at the count decide.
  InferredChip c;
  for (int i = 0; i < 5; ++i) observe_row(c, row(TaskKind::kCube, "AI_CORE", 30));
  for (int i = 0; i < 2; ++i) observe_row(c, row(TaskKind::kCube, "AI_CORE", 32));
  for (int b : {1, 16, 48}) observe_row(c, row(TaskKind::kCube, "AI_CORE", b));
  finish_inference(c);
  CHECK(c.cube_dim_rows.at(30) == 5);
  CHECK(c.cube_dim_rows.at(32) == 2);
  const auto all = chips();
  const ChipMatch m = best_chip(c, all);
  CHECK(all[m.index].chip.name == "ascend910-30");
  CHECK(m.exact);
  // More rows at 32 than at 30: the 910A.
  for (int i = 0; i < 4; ++i) observe_row(c, row(TaskKind::kCube, "AI_CORE", 32));
  const ChipMatch m2 = best_chip(c, all);
  CHECK(all[m2.index].chip.name == "ascend910");
}

TEST_CASE("chip inference: op_summary's Block Num is read as the block dim") {
  std::vector<KernelRow> rows;
  (void)npusim::profile::read_kernel_table(
      fs::path(NPUSIM_TEST_DATA_DIR) / "profiles/cann9_block_num/op_summary_20261001000000.csv",
      [&](const KernelRow& r) { rows.push_back(r); });
  InferredChip c;
  for (const auto& r : rows) observe_row(c, r);
  finish_inference(c);
  CHECK(std::find(c.vector_block_dims.begin(), c.vector_block_dims.end(), 40) !=
        c.vector_block_dims.end());
}

TEST_CASE("chip inference: an inexact best match says what did not fit") {
  InferredChip c;
  for (int b : {28, 56}) observe_row(c, row(TaskKind::kVector, "AI_VECTOR_CORE", b, 1800));
  observe_row(c, row(TaskKind::kCube, "AI_CORE", 28, 1800, 28));
  finish_inference(c);
  const auto all = chips();
  const ChipMatch m = best_chip(c, all);
  CHECK_FALSE(m.exact);
  CHECK_FALSE(m.mismatched.empty());
}

TEST_CASE("chip inference: no block dims and no cycles is an error, not a guess") {
  InferredChip c;
  finish_inference(c);
  CHECK_THROWS_AS(best_chip(c, chips()), npusim::InputError);
}
