// The MindSpore profiler reader: op_info JSON joined with the AI Core time file, dtype labels
// shifted back to the types they stand for, formats in CANN spelling, discovery of the folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "model/error.h"
#include "profile/discover.h"
#include "profile/mindspore_reader.h"
#include "profile/observation.h"
#include "profile/readers.h"
#include "test_files.h"

namespace fs = std::filesystem;
using namespace npusim::profile;
using npusim::InputError;

namespace {

const std::string kFolder = npusim::test::data_dir() + "/profiles/mindspore_crafted/lenet_8";
const std::string kTable = kFolder + "/lenet_8.csv";

std::vector<KernelRow> rows_of(const fs::path& file, KernelFileInfo* info = nullptr) {
  std::vector<KernelRow> rows;
  const auto i = read_kernel_table(file, [&](const KernelRow& r) { rows.push_back(r); });
  if (info) *info = i;
  return rows;
}

const char* kHeader = "task_id,stream_id,block_dim,full_op_name,op_name,op_type,subgraph,op_info\n";
const char* kTimes = "full_op_name,execution_time\nDefault/A-op1,0.002\n";

}  // namespace

TEST_CASE("mindspore: dtype labels are one TypeId below the type they stand for") {
  CHECK(mindspore_dtype("NUMBER_TYPE_FLOAT") == "FLOAT16");
  CHECK(mindspore_dtype("NUMBER_TYPE_FLOAT16") == "FLOAT");
  CHECK(mindspore_dtype("NUMBER_TYPE_INT16") == "INT32");
  CHECK(mindspore_dtype("NUMBER_TYPE_UINT") == "UINT8");
  CHECK(mindspore_dtype("NUMBER_TYPE_UINT8") == "UINT16");
  CHECK(mindspore_dtype("NUMBER_TYPE_BEGIN") == "BOOL");
  CHECK_FALSE(mindspore_dtype("NUMBER_TYPE_END").has_value());
  CHECK(mindspore_format("DefaultFormat") == "ND");
  CHECK(mindspore_format("FracZ") == "FRACTAL_Z");
  CHECK(mindspore_format("NC1HWC0") == "NC1HWC0");
  CHECK(is_mindspore_times_name("aicore_intermediate_0_detail.csv"));
  CHECK(is_mindspore_times_name("aicore_intermediate_12_detail.csv"));
  CHECK_FALSE(is_mindspore_times_name("aicore_intermediate_x_detail.csv"));
  CHECK_FALSE(is_mindspore_times_name("aicore_intermediate__detail.csv"));
}

TEST_CASE("mindspore: the op table is read as a kernel table joined with its times") {
  KernelFileInfo info;
  const auto rows = rows_of(kTable, &info);
  // 7 ops in the table, GetNext has no AI Core time.
  REQUIRE(rows.size() == 6);
  CHECK(info.rows == 6);
  CHECK_FALSE(info.has_start_time);
  CHECK(info.has_shapes);
  CHECK(info.layout.find("aicore_intermediate_0_detail.csv") != std::string::npos);
  CHECK(info.layout.find("1 ops without an AI Core time") != std::string::npos);

  const KernelRow& cast = rows[1];
  CHECK(cast.name == "Default/network/Cast-op2");
  CHECK(cast.type == "Cast");
  CHECK(cast.line == 3);
  CHECK(cast.task_id == 4);
  CHECK(cast.stream_id == 21);
  CHECK(cast.block_dim == 30);
  CHECK(cast.kind == TaskKind::kCube);
  CHECK(cast.task_type == "AI_CORE");
  CHECK(cast.duration_us == Approx(12.3));
  CHECK(cast.start_ns == 0);
  CHECK(cast.input_dtypes == "FLOAT");     // the fp32 image
  CHECK(cast.output_dtypes == "FLOAT16");  // cast to fp16 by AMP
  CHECK(cast.input_formats == "ND");

  const KernelRow& conv = rows[2];
  CHECK(conv.input_shapes == "8,1,32,32,16;25,1,16,16");
  CHECK(conv.input_formats == "NC1HWC0;FRACTAL_Z");
  CHECK(conv.input_dtypes == "FLOAT16;FLOAT16");
  CHECK(conv.output_shapes == "8,1,28,28,16");

  CHECK(rows[3].type == "MatMul");  // GetNext was left out
  CHECK(rows[3].output_dtypes == "FLOAT");
  CHECK(rows[4].input_shapes == "8;");  // a scalar input keeps its place
  CHECK(rows[4].output_dtypes == "BOOL");
  CHECK(rows[5].input_shapes == "1;2;3;4;5;6;7;8;9;10;11");  // input_10 after input_9
}

TEST_CASE("mindspore: every row becomes an observation the model accepts") {
  const ObservationSet set = read_observations({kTable});
  CHECK(set.compute.size() == 6);
  CHECK(set.skipped_count == 0);
  REQUIRE(set.compute.size() == 6);
  CHECK(set.compute[2].op.inputs.size() == 2);
  CHECK(set.compute[2].op.inputs[0].format == npusim::Format::kNC1HWC0);
  CHECK(set.compute[2].op.inputs[1].format == npusim::Format::kFractalZ);
  CHECK(set.compute[2].op.inputs[0].dtype == npusim::DType::kFloat16);
}

TEST_CASE("mindspore: discovery finds the folder and names its producer") {
  const Discovery d = discover_profiles(npusim::test::data_dir() + "/profiles/mindspore_crafted");
  REQUIRE(d.profiles.size() == 1);
  CHECK(d.profiles[0].producer == "mindspore");
  CHECK(d.profiles[0].name == "lenet_8");
  REQUIRE(d.profiles[0].kernel_files.size() == 1);
  CHECK(d.profiles[0].kernel_files[0].filename() == "lenet_8.csv");
  // The op table alone, given as a file, reads the same way.
  const Discovery f = discover_profiles(kTable);
  REQUIRE(f.profiles.size() == 1);
  CHECK(rows_of(f.profiles[0].kernel_files[0]).size() == 6);
}

TEST_CASE("mindspore: bad input is an error at its file and line") {
  npusim::test::TempDir dir;
  SECTION("no time file beside the table") {
    const auto t = dir.write("w/w.csv", std::string(kHeader) + "1,2,3,Default/A-op1,A-op1,Add,D,{}\n");
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains("w.csv:1: error:") &&
                                      Catch::Contains("aicore_intermediate_<N>_detail.csv"));
  }
  SECTION("two time files") {
    const auto t = dir.write("w/w.csv", std::string(kHeader) + "1,2,3,Default/A-op1,A-op1,Add,D,{}\n");
    dir.write("w/aicore_intermediate_0_detail.csv", kTimes);
    dir.write("w/aicore_intermediate_1_detail.csv", kTimes);
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains("several MindSpore time files"));
  }
  SECTION("op_info that is not JSON") {
    const auto t = dir.write("w/w.csv", std::string(kHeader) + "1,2,3,Default/A-op1,A-op1,Add,D,{oops\n");
    dir.write("w/aicore_intermediate_0_detail.csv", kTimes);
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains("w.csv:2:8: error: op_info is not JSON"));
  }
  SECTION("an unknown dtype label") {
    const auto t = dir.write(
        "w/w.csv", std::string(kHeader) +
                       "1,2,3,Default/A-op1,A-op1,Add,D,\"{\"\"input_0\"\": {\"\"format\"\": "
                       "\"\"DefaultFormat\"\", \"\"data_type\"\": \"\"NUMBER_TYPE_Q\"\", "
                       "\"\"shape\"\": \"\"1\"\"}}\"\n");
    dir.write("w/aicore_intermediate_0_detail.csv", kTimes);
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains("w.csv:2:8: error: op_info input_0: unknown "
                                                  "data_type 'NUMBER_TYPE_Q'"));
  }
  SECTION("a negative time") {
    const auto t = dir.write("w/w.csv", std::string(kHeader) + "1,2,3,Default/A-op1,A-op1,Add,D,{}\n");
    dir.write("w/aicore_intermediate_0_detail.csv", "full_op_name,execution_time\nDefault/A-op1,-1\n");
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains("aicore_intermediate_0_detail.csv:2:2: error:"));
  }
  SECTION("a time beyond a day") {
    const auto t = dir.write("w/w.csv", std::string(kHeader) + "1,2,3,Default/A-op1,A-op1,Add,D,{}\n");
    dir.write("w/aicore_intermediate_0_detail.csv", "full_op_name,execution_time\nDefault/A-op1,1e300\n");
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains("aicore_intermediate_0_detail.csv:2:2: error:") &&
                                      Catch::Contains("up to one day, got '1e300'"));
  }
  SECTION("an op timed twice") {
    const auto t = dir.write("w/w.csv", std::string(kHeader) + "1,2,3,Default/A-op1,A-op1,Add,D,{}\n");
    dir.write("w/aicore_intermediate_0_detail.csv", std::string(kTimes) + "Default/A-op1,0.003\n");
    CHECK_THROWS_WITH(rows_of(t), Catch::Contains(":3:1: error: op 'Default/A-op1' has a second"));
  }
}

TEST_CASE("mindspore: the shared 910 runs read whole (skips without ../shared/profiles)") {
  const fs::path root = fs::path(NPUSIM_SHARED_PROFILES_DIR) /
                        "Huawei-Performance-Model_Ascend-910B/application_test";
  if (!fs::is_directory(root)) {
    WARN("skipped: " << root.string() << " is absent");
    return;
  }
  const Discovery d = discover_profiles(root);
  CHECK(d.profiles.size() == 10);
  for (const auto& p : d.profiles) CHECK(p.producer == "mindspore");
  // resnet50 batch 16: 762 ops, all timed, 21.22 ms of AI Core time (sum of execution_time).
  const auto rows = rows_of(root / "final_test/resnet50_16_224_224/resnet50_16_224_224.csv");
  CHECK(rows.size() == 762);
  double total = 0;
  for (const auto& r : rows) total += r.duration_us;
  CHECK(total == Approx(21220).margin(10));
  const ObservationSet set =
      read_observations({(root / "final_test/resnet50_16_224_224/resnet50_16_224_224.csv").string()});
  CHECK(set.skipped_count == 0);
}
