// Tensor edges: what `inputs` names, what the graph infers from them, how old files keep working,
// what graph_to_toml writes, and each defect's error at its line.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/graph.h"
#include "model/passes.h"

namespace {

namespace fs = std::filesystem;
using npusim::Graph;
using npusim::TensorSource;

fs::path write_graph(const std::string& toml) {
  static std::atomic<int> n{0};
  const fs::path dir = fs::temp_directory_path() / fmt::format("npusim_edges_{}", ::getpid());
  fs::create_directories(dir);
  const fs::path file = dir / fmt::format("g{}.toml", n++);
  std::ofstream(file) << toml;
  return file;
}
Graph edges_graph_from(const std::string& toml) { return npusim::load_graph_file(write_graph(toml)); }

std::string edges_error_of(const fs::path& file) {
  try {
    (void)npusim::load_graph_file(file);
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "no error";
}
std::string edges_bad(const std::string& name) {
  return edges_error_of(fs::path(NPUSIM_TEST_DATA_DIR) / "bad" / name);
}

// The issue's seed: a Tile with multiples "128,1,1,1" feeding a broadcasting BatchMatMul, no
// output_shapes anywhere.
const char* kSeed = R"(
[graph]
name = "seed"
[[graph.input]]
name = "x"
shape = "128,8,1,32"
dtype = "FLOAT16"
[[graph.input]]
name = "w"
shape = "1,8,32,300"
dtype = "FLOAT16"
constant = true
[[graph.input]]
name = "mult"
shape = "4"
dtype = "INT64"
constant = true
[[graph.op]]
name = "w_tile"
type = "Tile"
inputs = ["w", "mult"]
attrs = { multiples = "128,1,1,1" }
[[graph.op]]
name = "cross"
type = "BatchMatMul"
inputs = ["x", "w_tile:0"]
[[graph.op]]
name = "act"
type = "Relu"
inputs = ["cross"]
)";

}  // namespace

TEST_CASE("inputs name producers and graph inputs, and shapes and dtypes follow the edges",
          "[graph][edges]") {
  const Graph g = edges_graph_from(kSeed);
  REQUIRE(g.size() == 3);
  const std::size_t tile = *g.find("w_tile");
  const std::size_t bmm = *g.find("cross");
  CHECK(g.source(tile, 0).kind == TensorSource::Kind::kGraphInput);
  CHECK(g.source(bmm, 1) == TensorSource{TensorSource::Kind::kOp, tile, 0, false});
  CHECK(g.producer(bmm, 1) == std::optional<std::size_t>{tile});
  CHECK_FALSE(g.producer(bmm, 0).has_value());
  CHECK(g.source_ref(bmm, 1) == "w_tile");
  // 1,8,32,300 tiled 128,1,1,1 -> 128,8,32,300; then (128,8,1,32)(128,8,32,300) -> 128,8,1,300
  CHECK(g.resolved(tile).output_shapes == "128,8,32,300");
  CHECK(g.resolved(bmm).input_shapes == "128,8,1,32;128,8,32,300");
  CHECK(g.resolved(bmm).output_shapes == "128,8,1,300");
  CHECK(g.resolved(*g.find("act")).input_dtypes == "FLOAT16");
  CHECK(g.outputs_from(bmm) == npusim::OutputsFrom::kInferred);
  const auto uses = g.uses(tile);
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].op == bmm);
  CHECK(uses[0].input == 1);
  // the op runs with the shapes the edges gave it
  CHECK(g.instantiate(bmm, 1).outputs.at(0).shape == std::vector<std::int64_t>{128, 8, 1, 300});
}

TEST_CASE("the seed's Tile and broadcast batch are rewritten without declared output_shapes",
          "[graph][edges][passes]") {
  const Graph g = edges_graph_from(kSeed);
  const auto r = npusim::apply_passes(g, {"drop_redundant_tile", "fold_bmm_batch"});
  REQUIRE(r.changes.size() == 2);
  CHECK(r.changes[0].pass == "drop_redundant_tile");
  CHECK(r.changes[1].pass == "fold_bmm_batch");
  CHECK_FALSE(r.graph.find("w_tile").has_value());
  const std::size_t bmm = *r.graph.find("cross");
  // the BatchMatMul reads w itself, then folds 128 into M: (128,32) x (32,300) per head
  CHECK(r.graph.source_ref(bmm, 1) == "w");
  CHECK(r.graph.resolved(bmm).input_shapes == "8,128,32;8,32,300");
  // act still reads 128,8,1,300 (a view of the folded product after the Transpose back)
  CHECK(r.graph.resolved(*r.graph.find("act")).input_shapes == "128,8,1,300");
}

TEST_CASE("an old file's edges are recovered from after and equal shape templates",
          "[graph][edges]") {
  const Graph g = edges_graph_from(R"(
[graph]
name = "old"
[[graph.op]]
name = "a"
type = "Relu"
shapes = "B,16"
dtypes = "FLOAT16"
[[graph.op]]
name = "b"
type = "Add"
shapes = "B,16;B,16"
dtypes = "FLOAT16"
after = ["a"]
[[graph.op]]
name = "c"
type = "Cast"
shapes = "B,16"
dtypes = "FLOAT16"
output_shapes = "B,16"
output_dtypes = "FLOAT32"
)");
  // a has no producer; b's two inputs both match a's inferred output B,16 FLOAT16
  CHECK(g.source(0, 0).kind == TensorSource::Kind::kNone);
  CHECK(g.source(1, 0) == TensorSource{TensorSource::Kind::kOp, 0, 0, true});
  CHECK(g.source(1, 1) == TensorSource{TensorSource::Kind::kOp, 0, 0, true});
  // c follows b (no after: the previous op) and reads its B,16 output
  CHECK(g.source(2, 0).index == 1);
  // graph_to_toml writes what the file said: no inputs invented
  CHECK(npusim::graph_to_toml(g).find("inputs") == std::string::npos);
}

TEST_CASE("graph_to_toml writes inputs and graph inputs, and reading it back gives the same",
          "[graph][edges]") {
  const Graph g = edges_graph_from(kSeed);
  const std::string text = npusim::graph_to_toml(g);
  CHECK_THAT(text, Catch::Contains("[[graph.input]]") && Catch::Contains("constant = true") &&
                       Catch::Contains("inputs = [\"x\", \"w_tile:0\"]"));
  CHECK(text.find("shapes =") == std::string::npos);  // left to the edges, as written
  const Graph back = edges_graph_from(text);
  REQUIRE(back.size() == g.size());
  CHECK(back.graph_inputs().size() == 3);
  for (std::size_t i = 0; i < g.size(); ++i) {
    CHECK(back.resolved(i).input_shapes == g.resolved(i).input_shapes);
    CHECK(back.resolved(i).output_shapes == g.resolved(i).output_shapes);
    for (std::size_t j = 0; j < g.input_count(i); ++j) CHECK(back.source(i, j) == g.source(i, j));
  }
  CHECK(npusim::graph_to_toml(back) == text);
}

TEST_CASE("a declared input shape may be a view of its edge's tensor, not another count",
          "[graph][edges]") {
  const Graph g = edges_graph_from(R"(
[graph]
name = "view"
[[graph.input]]
name = "ids"
shape = "B,4000"
dtype = "INT64"
[[graph.op]]
name = "valid"
type = "GreaterEqual"
inputs = ["ids", ""]
shapes = "B,4000;1"
dtypes = "INT64"
[[graph.op]]
name = "mask"
type = "Cast"
inputs = ["valid"]
shapes = "B,4000,1"
attrs = { dst_type = "FLOAT16" }
)");
  CHECK(g.resolved(1).input_shapes == "B,4000,1");
  CHECK(g.resolved(1).input_dtypes == "BOOL");
  CHECK(g.resolved(1).output_shapes == "B,4000,1");
  CHECK(g.resolved(1).output_dtypes == "FLOAT16");
}

TEST_CASE("each defect of an edge graph is an error at its line with its phrase",
          "[graph][edges]") {
  CHECK_THAT(edges_bad("graph_edge_cycle.toml"), Catch::Contains("graph_edge_cycle.toml:14:10") &&
                                               Catch::Contains("is on a dependency cycle: b -> a -> b"));
  CHECK_THAT(edges_bad("graph_edge_unknown_input.toml"),
             Catch::Contains("graph_edge_unknown_input.toml:10:10") &&
                 Catch::Contains("input 0 names 'y:0', which is neither an op"));
  CHECK_THAT(edges_bad("graph_edge_no_shape.toml"),
             Catch::Contains("graph_edge_no_shape.toml:14:10") &&
                 Catch::Contains("whose shape is unknown (no shape rule for MyCustomOp 'custom')"));
  CHECK_THAT(edges_bad("graph_edge_output_mismatch.toml"),
             Catch::Contains("graph_edge_output_mismatch.toml:13:17") &&
                 Catch::Contains("output 0 is declared 'B,8,32,300' but inferred '128,8,32,300'"));
  CHECK_THAT(edges_bad("graph_edge_input_mismatch.toml"),
             Catch::Contains("graph_edge_input_mismatch.toml:11:10") &&
                 Catch::Contains("input 0 is declared 'B,32' but 'x' is 'B,16'"));
  CHECK_THAT(edges_bad("graph_edge_bad_output_index.toml"),
             Catch::Contains("graph_edge_bad_output_index.toml:14:10") &&
                 Catch::Contains("reads 'a:1', but 'a' has 1 output"));
  CHECK_THAT(edges_bad("graph_edge_no_broadcast.toml"),
             Catch::Contains("graph_edge_no_broadcast.toml:11:1") &&
                 Catch::Contains("'sum' (Add): input shapes 'B,16', 'B,8' do not broadcast"));
}
