// Measurement conditions of a graph ([graph.measured], measured_shapes) and the anchoring rule
// (model/measured.h), and the comparison of anchored with plain predictions
// (model/anchor_accuracy.h).
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/anchor_accuracy.h"
#include "model/graph.h"
#include "model/hw_spec.h"
#include "model/measured.h"
#include "model/passes.h"
#include "model/predict.h"

namespace {

namespace fs = std::filesystem;
using npusim::Graph;

Graph measured_graph_from(const std::string& toml) {
  static std::atomic<int> n{0};
  const fs::path dir = fs::temp_directory_path() / fmt::format("npusim_measured_{}", ::getpid());
  fs::create_directories(dir);
  const fs::path file = dir / fmt::format("g{}.toml", n++);
  std::ofstream(file) << toml;
  return npusim::load_graph_file(file);
}

std::string measured_error_of(const std::string& toml) {
  try {
    (void)measured_graph_from(toml);
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kGraph = R"([graph]
name = "m"
[graph.measured]
hw = "ascend910b3"
cube_cores = 12
batch = 8
[[graph.op]]
name = "add"
type = "Add"
shapes = "B,1024;B,1024"
dtypes = "FLOAT16;FLOAT16"
duration_us = 40.0
[[graph.op]]
name = "mm"
type = "MatMulV2"
shapes = "B,1024;1024,256"
dtypes = "FLOAT16;FLOAT16"
after = ["add"]
duration_us = 12.5
measured_shapes = "16,1024;1024,256"
)";

npusim::HwSpec measured_chip(const std::string& name) {
  return npusim::load_hw_spec(
      npusim::resolve_hw_spec(name, {fs::path(NPUSIM_SOURCE_DIR) / "hw_specs"}));
}

}  // namespace

TEST_CASE("anchoring scales a measurement by the model's ratio", "[measured]") {
  // Measured 100 us; the model's prediction doubles under the new conditions: 200 us.
  CHECK(*npusim::anchored_us(100.0, 30.0, 15.0) == 200.0);
  // Unchanged prediction: the measurement exactly.
  CHECK(*npusim::anchored_us(100.0, 15.0, 15.0) == 100.0);
  // Nothing to take a ratio of.
  CHECK_FALSE(npusim::anchored_us(100.0, 15.0, 0.0).has_value());
}

TEST_CASE("[graph.measured] and measured_shapes are read and kept by graph_to_toml",
          "[measured]") {
  const Graph g = measured_graph_from(kGraph);
  REQUIRE(g.measured().has_value());
  CHECK(g.measured()->hw == "ascend910b3");
  CHECK(*g.measured()->cube_cores == 12);
  CHECK_FALSE(g.measured()->vector_cores.has_value());
  CHECK(*g.measured()->batch == 8);
  // Own shapes at the measured batch; the given measured_shapes with the rule's outputs.
  CHECK(npusim::measured_input_shapes(g, 0) == "8,1024;8,1024");
  CHECK(npusim::measured_output_shapes(g, 0) == "8,1024");
  CHECK(npusim::measured_input_shapes(g, 1) == "16,1024;1024,256");
  CHECK(npusim::measured_output_shapes(g, 1) == "16,256");
  const npusim::OpDesc d = npusim::measured_desc(g, 1);
  REQUIRE(d.outputs.size() == 1);
  CHECK(d.outputs[0].shape == std::vector<std::int64_t>{16, 256});
  const npusim::HwSpec hw = measured_chip("ascend910b3");
  CHECK(npusim::measured_cube_cores(*g.measured(), hw) == 12);
  CHECK(npusim::measured_vector_cores(*g.measured(), hw) == hw.chip.vector_cores);

  const Graph again = measured_graph_from(npusim::graph_to_toml(g));
  REQUIRE(again.measured().has_value());
  CHECK(again.measured()->hw == "ascend910b3");
  CHECK(*again.measured()->batch == 8);
  CHECK(*again.ops()[1].measured_shapes == "16,1024;1024,256");
  CHECK(npusim::measured_input_shapes(again, 0) == "8,1024;8,1024");
}

TEST_CASE("a pass keeps the conditions and the shapes a rewritten op was measured with",
          "[measured]") {
  const Graph g = measured_graph_from(R"([graph]
name = "tile bmm"
[graph.measured]
hw = "ascend910b3"
batch = 4
[[graph.op]]
name = "q"
type = "Relu"
shapes = "B,8,1,32"
dtypes = "FLOAT16"
after = []
duration_us = 3.0
[[graph.op]]
name = "w_tile"
type = "Tile"
shapes = "1,8,32,300;4"
dtypes = "FLOAT16;INT64"
output_shapes = "B,8,32,300"
output_dtypes = "FLOAT16"
after = []
duration_us = 20.0
[[graph.op]]
name = "bmm"
type = "BatchMatMul"
shapes = "B,8,1,32;B,8,32,300"
dtypes = "FLOAT16"
output_shapes = "B,8,1,300"
output_dtypes = "FLOAT16"
after = ["q", "w_tile"]
duration_us = 50.0
)");
  const npusim::PassResult r = npusim::drop_redundant_tile(g);
  REQUIRE(r.changes.size() == 1);
  REQUIRE(r.graph.measured().has_value());
  CHECK(*r.graph.measured()->batch == 4);
  const std::size_t bmm = *r.graph.find("bmm");
  // The BatchMatMul now reads the untiled weight, but was measured on the tiled one.
  CHECK(npusim::same_shape_list(r.graph.resolved(bmm).input_shapes, "B,8,1,32;1,8,32,300"));
  CHECK(*r.graph.ops()[bmm].measured_shapes == "4,8,1,32;4,8,32,300");
  CHECK(*r.graph.ops()[bmm].measured_output_shapes == "4,8,1,300");
  CHECK(npusim::measured_input_shapes(r.graph, bmm) == "4,8,1,32;4,8,32,300");
}

TEST_CASE("bad measurement conditions are errors at their line", "[measured][bad]") {
  SECTION("an op with shapes in B and no measured batch") {
    std::string t = kGraph;
    t.replace(t.find("batch = 8\n"), 10, "");
    CHECK_THAT(measured_error_of(t), Catch::Contains(":6:") && Catch::Contains("graph op 'add'") &&
                                Catch::Contains("batch"));
  }
  SECTION("measured_shapes on an op without a duration") {
    std::string t = kGraph;
    t.replace(t.find("duration_us = 12.5\n"), 19, "");
    CHECK_THAT(measured_error_of(t), Catch::Contains(":19:") && Catch::Contains("no duration_us"));
  }
  SECTION("measured_shapes without [graph.measured]") {
    std::string t = kGraph;
    t.erase(t.find("[graph.measured]"), t.find("[[graph.op]]") - t.find("[graph.measured]"));
    CHECK_THAT(measured_error_of(t), Catch::Contains("[graph.measured]"));
  }
  SECTION("an unknown key of [graph.measured]") {
    std::string t = kGraph;
    t.replace(t.find("batch = 8"), 9, "batches = 8");
    CHECK_THAT(measured_error_of(t), Catch::Contains(":6:") && Catch::Contains("batches"));
  }
  SECTION("measured_shapes in B") {
    std::string t = kGraph;
    t.replace(t.find("\"16,1024;1024,256\""), 18, "\"B,1024;1024,256\"");
    CHECK_THAT(measured_error_of(t), Catch::Contains(":20:") && Catch::Contains("concrete"));
  }
}

TEST_CASE("the nearest measured shape of the same type anchors an unseen one", "[measured]") {
  const npusim::HwSpec hw = measured_chip("ascend910b3");
  const auto sample = [](const std::string& shapes, double us) {
    npusim::Sample s;
    npusim::OpText t;
    t.type = "Add";
    t.input_shapes = shapes;
    t.input_dtypes = "FLOAT16;FLOAT16";
    s.op = npusim::make_op(t, {"t", 1, 1});
    s.measured_us = us;
    return s;
  };
  // The source measured two shapes; the target runs one of them (seen) and one near the second.
  const std::vector<npusim::Sample> source = {sample("64,1024;64,1024", 10.0),
                                              sample("64,1024;64,1024", 14.0),
                                              sample("4096,1024;4096,1024", 80.0)};
  const std::vector<npusim::Sample> target = {sample("64,1024;64,1024", 11.0),
                                              sample("8192,1024;8192,1024", 150.0)};
  CHECK(npusim::shape_distance(source[2].op, target[1].op) <
        npusim::shape_distance(source[0].op, target[1].op));
  const auto c = npusim::compare_anchoring(source, target, hw);
  CHECK(c.target_rows == 2);
  CHECK(c.seen == 1);
  CHECK(c.compared == 1);
  const double p_new = npusim::predict_sample(target[1], hw).predicted_us;
  const double p_src = npusim::predict_sample(source[2], hw).predicted_us;
  const double anchored = 80.0 * p_new / p_src;
  CHECK(c.anchored.mape == Approx(std::abs(anchored - 150.0) / 150.0));
  CHECK(c.plain.mape == Approx(std::abs(p_new - 150.0) / 150.0));
  CHECK(c.nearest.mape == Approx(std::abs(80.0 - 150.0) / 150.0));
}
