// predict() throughput per family: the simulator calls it for every (op, gear, core budget), and
// sweeps call the simulator thousands of times, so it must stay cheap (issue #16: >= 15 M/s per
// core for every family). BM_<family> is what the simulator, calibration and cross-validation
// run: predict() on a PreparedOp, with everything that depends on the chip or the core budget
// computed per call. BM_<family>_cold is predict() on a plain OpDesc, which prepares the op on
// every call (what a one-off prediction costs).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "model/predict.h"

namespace {

using namespace npusim;

const HwSpec& hw() {
  static const HwSpec spec =
      load_hw_spec(std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs" / "ascend910b3.toml");
  return spec;
}

OpDesc make(const char* type, const char* shapes, const char* dtypes, const char* attr_key = nullptr,
            const char* attr_value = nullptr) {
  OpText t;
  t.type = type;
  t.input_shapes = shapes;
  t.input_dtypes = dtypes;
  if (attr_key) t.attrs.emplace_back(attr_key, attr_value);
  return make_op(t, SourcePos{"<bench>", 0, 0});
}

void run(benchmark::State& state, const OpDesc& desc) {
  const HwSpec& spec = hw();
  CoreBudget budget{};
  if (state.range(0) == 0) {  // prepared once, predicted per iteration
    const PreparedOp op(desc);
    for (auto _ : state) {
      OpCost c = predict(op, spec, budget);
      benchmark::DoNotOptimize(c);
    }
  } else {  // cold: prepared per iteration
    for (auto _ : state) {
      OpCost c = predict(desc, spec, budget);
      benchmark::DoNotOptimize(c);
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_cube_matmul(benchmark::State& s) { run(s, make("MatMulV2", "4096,1024;1024,4096", "BF16")); }
void BM_cube_batchmatmul(benchmark::State& s) {
  run(s, make("BatchMatMulV2", "1024,1,32;32,300", "FLOAT16"));
}
void BM_cube_conv2d(benchmark::State& s) {
  run(s, make("Conv2D", "8,64,56,56;128,64,3,3", "FLOAT16", "pads", "1,1,1,1"));
}
void BM_elementwise_add(benchmark::State& s) { run(s, make("Add", "1024,4096;1024,4096", "FLOAT16")); }
void BM_elementwise_broadcast_int64(benchmark::State& s) {
  run(s, make("Equal", "1,4000;400,1", "INT64"));
}
void BM_reduction_softmax(benchmark::State& s) { run(s, make("SoftmaxV2", "64,12,128,128", "FLOAT16")); }
void BM_data_movement_concat(benchmark::State& s) {
  run(s, make("ConcatD", "64,400;64,400", "FLOAT16", "concat_dim", "1"));
}
void BM_index_gather(benchmark::State& s) {
  run(s, make("GatherV2", "1000000,64;64,4000;1", "FLOAT16;INT32;INT32"));
}
void BM_sort_topk(benchmark::State& s) { run(s, make("TopKV2", "64,4000", "FLOAT16", "k", "100")); }
void BM_aicpu_unique(benchmark::State& s) { run(s, make("Unique", "64,4000", "INT64")); }
void BM_generic_unknown(benchmark::State& s) { run(s, make("MyFusedOp", "64,4000", "FLOAT16")); }

}  // namespace

BENCHMARK(BM_cube_matmul)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_cube_batchmatmul)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_cube_conv2d)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_elementwise_add)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_elementwise_broadcast_int64)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_reduction_softmax)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_data_movement_concat)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_index_gather)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_sort_topk)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_aicpu_unique)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK(BM_generic_unknown)->ArgName("cold")->Arg(0)->Arg(1);
BENCHMARK_MAIN();
