// Graph passes on small hand-written graphs: the rewrite each makes, and its predicted gain
// checked against predict() of the ops removed, changed and added, written out by hand.
#include "model/passes.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/graph.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

namespace {

using npusim::Graph;
using npusim::GraphOp;
using npusim::PassResult;
namespace test = npusim::test;
namespace fs = std::filesystem;

// A graph from TOML text, through a file as users write them.
Graph graph_from(const std::string& toml) {
  static std::atomic<int> n{0};
  const fs::path dir = fs::temp_directory_path() / fmt::format("npusim_passes_{}", ::getpid());
  fs::create_directories(dir);
  const fs::path file = dir / fmt::format("g{}.toml", n++);
  std::ofstream(file) << toml;
  return npusim::load_graph_file(file);
}

const npusim::HwSpec& hw() { return test::chip("ascend910b3"); }

double us(const npusim::OpDesc& op) { return npusim::predict(op, hw()).duration_us; }

// Σ predict() over the graph at batch size `b`.
double graph_us(const Graph& g, std::int64_t b) {
  double sum = 0;
  for (std::size_t i = 0; i < g.size(); ++i) sum += us(g.instantiate(i, b));
  return sum;
}

const GraphOp& op_named(const Graph& g, const std::string& name) {
  const auto i = g.find(name);
  REQUIRE(i.has_value());
  return g.ops()[*i];
}

// What input `j` of op `name` reads ("op", "op:k", a graph input, "" for no edge).
std::string source_of(const Graph& g, const std::string& name, std::size_t j) {
  const auto i = g.find(name);
  REQUIRE(i.has_value());
  return g.source_ref(*i, j);
}

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (const GraphOp& op : g.ops()) out.push_back(op.text.name);
  return out;
}

npusim::OpDesc op_with_outputs(const std::string& type, const std::string& shapes,
                               const std::string& dtypes, const std::string& out_shapes,
                               const std::string& out_dtypes,
                               std::vector<std::pair<std::string, std::string>> attrs = {},
                               const std::string& placement = "") {
  npusim::OpText t;
  t.type = type;
  t.input_shapes = shapes;
  t.input_dtypes = dtypes;
  t.output_shapes = out_shapes;
  t.output_dtypes = out_dtypes;
  t.attrs = std::move(attrs);
  t.placement = placement;
  return test::op(t);
}

const char* kTileBmm = R"(
[graph]
name = "tile bmm"
[[graph.op]]
name = "q"
type = "Relu"
shapes = "B,8,1,32"
dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "w_tile"
type = "Tile"
shapes = "1,8,32,300;4"
dtypes = "FLOAT16;INT64"
output_shapes = "B,8,32,300"
output_dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "bmm"
type = "BatchMatMul"
shapes = "B,8,1,32;B,8,32,300"
dtypes = "FLOAT16"
output_shapes = "B,8,1,300"
output_dtypes = "FLOAT16"
after = ["q", "w_tile"]
)";

}  // namespace

TEST_CASE("drop_redundant_tile removes a Tile that only feeds a broadcasting BatchMatMul",
          "[passes]") {
  const Graph g = graph_from(kTileBmm);
  const PassResult r = npusim::drop_redundant_tile(g);
  REQUIRE(r.changes.size() == 1);
  CHECK(r.changes[0].ops == std::vector<std::string>{"w_tile", "bmm"});
  CHECK(names(r.graph) == std::vector<std::string>{"q", "bmm"});
  const GraphOp& bmm = op_named(r.graph, "bmm");
  CHECK(bmm.text.input_shapes == "B,8,1,32;1,8,32,300");
  CHECK(source_of(r.graph, "bmm", 0) == "q");  // an edge (recovered from `after`), written out

  // The gain at batch 16: the Tile's time plus the BatchMatMul's change, by hand.
  const double tile =
      us(op_with_outputs("Tile", "1,8,32,300;4", "FLOAT16;INT64", "16,8,32,300", "FLOAT16"));
  const double bmm_before = us(
      op_with_outputs("BatchMatMul", "16,8,1,32;16,8,32,300", "FLOAT16", "16,8,1,300", "FLOAT16"));
  const double bmm_after = us(
      op_with_outputs("BatchMatMul", "16,8,1,32;1,8,32,300", "FLOAT16", "16,8,1,300", "FLOAT16"));
  CHECK(tile > 0);
  CHECK(graph_us(g, 16) - graph_us(r.graph, 16) ==
        Approx(tile + bmm_before - bmm_after).epsilon(1e-12));
  CHECK(graph_us(r.graph, 16) < graph_us(g, 16));
}

TEST_CASE("drop_redundant_tile keeps a Tile that another op also reads", "[passes]") {
  std::string toml = kTileBmm;
  toml += R"(
[[graph.op]]
name = "other"
type = "Relu"
shapes = "B,8,32,300"
dtypes = "FLOAT16"
after = ["w_tile"]
)";
  const Graph g = graph_from(toml);
  CHECK(npusim::drop_redundant_tile(g).changes.empty());
}

TEST_CASE("tile_concat turns a same-source Concat into a Tile along the concat axis", "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "concat"
[[graph.op]]
name = "x"
type = "Relu"
shapes = "B,2400"
dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "cat"
type = "ConcatD"
shapes = "B,2400;B,2400;B,2400"
dtypes = "FLOAT16"
output_shapes = "B,7200"
output_dtypes = "FLOAT16"
attrs = { concat_dim = 1, same_source = true }
)");
  const PassResult r = npusim::tile_concat(g);
  REQUIRE(r.changes.size() == 1);
  const GraphOp& t = op_named(r.graph, "cat");
  CHECK(t.text.type == "Tile");
  CHECK(t.text.input_shapes == "B,2400;2");
  CHECK(t.text.input_dtypes == "FLOAT16;INT64");
  CHECK(t.text.output_shapes == "B,7200");
  const double concat = us(op_with_outputs("ConcatD", "20,2400;20,2400;20,2400", "FLOAT16",
                                           "20,7200", "FLOAT16", {{"concat_dim", "1"}}));
  const double tile = us(op_with_outputs("Tile", "20,2400;2", "FLOAT16;INT64", "20,7200", "FLOAT16",
                                         {{"multiples", "1,3"}}));
  CHECK(graph_us(g, 20) - graph_us(r.graph, 20) == Approx(concat - tile).epsilon(1e-12));
  CHECK(tile < concat);  // the Tile reads the tensor once instead of three times
}

TEST_CASE("tile_concat leaves a Concat alone unless its inputs are said to be one tensor",
          "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "concat"
[[graph.op]]
name = "cat"
type = "ConcatD"
shapes = "B,2400;B,2400"
dtypes = "FLOAT16"
output_shapes = "B,4800"
output_dtypes = "FLOAT16"
attrs = { concat_dim = 1 }
)");
  CHECK(npusim::tile_concat(g).changes.empty());
}

TEST_CASE("tile_concat swaps a Concat of Tiles with equal multiples into a Tile of a Concat",
          "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "tiles"
[[graph.op]]
name = "t1"
type = "Tile"
shapes = "1,100;2"
dtypes = "FLOAT16;INT64"
output_shapes = "B,100"
output_dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "t2"
type = "Tile"
shapes = "1,50;2"
dtypes = "FLOAT16;INT64"
output_shapes = "B,50"
output_dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "cat"
type = "ConcatD"
shapes = "B,100;B,50"
dtypes = "FLOAT16"
output_shapes = "B,150"
output_dtypes = "FLOAT16"
attrs = { concat_dim = 1 }
after = ["t1", "t2"]
[[graph.op]]
name = "use"
type = "Relu"
shapes = "B,150"
dtypes = "FLOAT16"
after = ["cat"]
)");
  const PassResult r = npusim::tile_concat(g);
  REQUIRE(r.changes.size() == 1);
  CHECK(names(r.graph) == std::vector<std::string>{"cat", "cat_tile", "use"});
  CHECK(op_named(r.graph, "cat").text.input_shapes == "1,100;1,50");
  CHECK(op_named(r.graph, "cat").text.output_shapes == "1,150");
  CHECK(op_named(r.graph, "cat_tile").text.input_shapes == "1,150;2");
  // the Tile's output is left to the shape rule (multiples B,1)
  CHECK(r.graph.resolved(*r.graph.find("cat_tile")).output_shapes == "B,150");
  CHECK(source_of(r.graph, "use", 0) == "cat_tile");
  const double before =
      us(op_with_outputs("Tile", "1,100;2", "FLOAT16;INT64", "64,100", "FLOAT16")) +
      us(op_with_outputs("Tile", "1,50;2", "FLOAT16;INT64", "64,50", "FLOAT16")) +
      us(op_with_outputs("ConcatD", "64,100;64,50", "FLOAT16", "64,150", "FLOAT16",
                         {{"concat_dim", "1"}}));
  const double after = us(op_with_outputs("ConcatD", "1,100;1,50", "FLOAT16", "1,150", "FLOAT16",
                                          {{"concat_dim", "1"}})) +
                       us(op_with_outputs("Tile", "1,150;2", "FLOAT16;INT64", "64,150", "FLOAT16"));
  const double relu = us(test::op("Relu", "64,150", "FLOAT16"));
  CHECK(graph_us(g, 64) - relu == Approx(before).epsilon(1e-12));
  CHECK(graph_us(r.graph, 64) - relu == Approx(after).epsilon(1e-12));
}

TEST_CASE("fold_bmm_batch folds a shared batch axis next to M into M as a free reshape",
          "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "fold"
[[graph.op]]
name = "bmm"
type = "BatchMatMul"
shapes = "8,B,1,32;8,1,32,300"
dtypes = "FLOAT16"
output_shapes = "8,B,1,300"
output_dtypes = "FLOAT16"
after = []
)");
  const PassResult r = npusim::fold_bmm_batch(g);
  REQUIRE(r.changes.size() == 1);
  REQUIRE(r.graph.size() == 1);
  const GraphOp& b = op_named(r.graph, "bmm");
  CHECK(b.text.input_shapes == "8,B,32;8,32,300");
  CHECK(b.text.output_shapes == "8,B,300");
  const auto before = npusim::predict(
      op_with_outputs("BatchMatMul", "8,128,1,32;8,1,32,300", "FLOAT16", "8,128,1,300", "FLOAT16"),
      hw());
  const auto after = npusim::predict(
      op_with_outputs("BatchMatMul", "8,128,32;8,32,300", "FLOAT16", "8,128,300", "FLOAT16"), hw());
  CHECK(graph_us(g, 128) - graph_us(r.graph, 128) ==
        Approx(before.duration_us - after.duration_us).epsilon(1e-12));
  // 1 row of 16 used before, every row after: the point of the fold.
  CHECK(after.cube_efficiency > before.cube_efficiency);
}

TEST_CASE("fold_bmm_batch adds Transposes when a batch axis lies between the folded one and M",
          "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "fold"
[[graph.op]]
name = "bmm"
type = "BatchMatMul"
shapes = "B,8,1,32;1,8,32,300"
dtypes = "FLOAT16"
output_shapes = "B,8,1,300"
output_dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "next"
type = "Relu"
shapes = "B,8,1,300"
dtypes = "FLOAT16"
)");
  const PassResult r = npusim::fold_bmm_batch(g);
  REQUIRE(r.changes.size() == 1);
  CHECK(names(r.graph) == std::vector<std::string>{"bmm_fold_in", "bmm", "bmm_fold_out", "next"});
  CHECK(op_named(r.graph, "bmm_fold_in").text.output_shapes == "8,B,1,32");
  CHECK(op_named(r.graph, "bmm").text.input_shapes == "8,B,32;8,32,300");
  CHECK(op_named(r.graph, "bmm_fold_out").text.input_shapes == "8,B,1,300");
  CHECK(op_named(r.graph, "bmm_fold_out").text.output_shapes == "B,8,1,300");
  CHECK(source_of(r.graph, "next", 0) == "bmm_fold_out");
  const double bmm_before = us(
      op_with_outputs("BatchMatMul", "128,8,1,32;1,8,32,300", "FLOAT16", "128,8,1,300", "FLOAT16"));
  const double added =
      us(op_with_outputs("Transpose", "128,8,1,32", "FLOAT16", "8,128,1,32", "FLOAT16",
                         {{"perm", "1,0,2,3"}})) +
      us(op_with_outputs("BatchMatMul", "8,128,32;8,32,300", "FLOAT16", "8,128,300", "FLOAT16")) +
      us(op_with_outputs("Transpose", "8,128,1,300", "FLOAT16", "128,8,1,300", "FLOAT16",
                         {{"perm", "1,0,2,3"}}));
  CHECK(graph_us(g, 128) - graph_us(r.graph, 128) == Approx(bmm_before - added).epsilon(1e-12));
}

TEST_CASE("fold_bmm_batch does nothing when both operands span the batch", "[passes]") {
  const Graph g = graph_from(kTileBmm);
  CHECK(npusim::fold_bmm_batch(g).changes.empty());
  // ...but applies once the Tile is gone, which is why passes run in a fixed order.
  const PassResult both = npusim::apply_passes(g, {"fold_bmm_batch", "drop_redundant_tile"});
  REQUIRE(both.changes.size() == 2);
  CHECK(both.changes[0].pass == "drop_redundant_tile");
  CHECK(both.changes[1].pass == "fold_bmm_batch");
}

namespace {

const char* kInt64 = R"(
[graph]
name = "int64"
[[graph.op]]
name = "ge"
type = "GreaterEqual"
shapes = "B,4000;1"
dtypes = "INT64;INT64"
output_dtypes = "BOOL"
after = []
attrs = { value_range = "-1,399" }
[[graph.op]]
name = "bucket"
type = "Bucketize"
shapes = "B,64"
dtypes = "INT64"
output_shapes = "B,64"
output_dtypes = "INT32"
after = []
[[graph.op]]
name = "bucket_i64"
type = "Cast"
shapes = "B,64"
dtypes = "INT32"
output_shapes = "B,64"
output_dtypes = "INT64"
after = ["bucket"]
[[graph.op]]
name = "mod"
type = "FloorMod"
shapes = "B,64;1"
dtypes = "INT64;INT64"
after = ["bucket_i64"]
[[graph.op]]
name = "use"
type = "Relu"
shapes = "B,64"
dtypes = "FLOAT16"
after = ["mod", "ge"]
)";

}  // namespace

TEST_CASE("int64_narrow runs an int64 compare on int32 with a Cast when value_range fits",
          "[passes]") {
  const Graph g = graph_from(kInt64);
  const PassResult r = npusim::int64_narrow(g);
  REQUIRE(r.changes.size() == 1);  // mod has no value_range and nobody asserted it fits
  CHECK(names(r.graph) ==
        std::vector<std::string>{"ge_cast0", "ge", "bucket", "bucket_i64", "mod", "use"});
  CHECK(op_named(r.graph, "ge").text.input_dtypes == "INT32;INT32");
  CHECK(op_named(r.graph, "ge_cast0").text.output_dtypes == "INT32");
  const double before = us(op_with_outputs("GreaterEqual", "32,4000;1", "INT64;INT64", "", "BOOL"));
  const double after = us(op_with_outputs("Cast", "32,4000", "INT64", "32,4000", "INT32")) +
                       us(op_with_outputs("GreaterEqual", "32,4000;1", "INT32;INT32", "", "BOOL"));
  CHECK(graph_us(g, 32) - graph_us(r.graph, 32) == Approx(before - after).epsilon(1e-12));
  CHECK(after < before);  // int64 compares fall back to the scalar unit
}

TEST_CASE("int64_narrow takes --assume-fits and reads past a Cast from int32, which goes",
          "[passes]") {
  const Graph g = graph_from(kInt64);
  npusim::PassOptions opt;
  opt.assume_fits = {"mod"};
  const PassResult r = npusim::int64_narrow(g, opt);
  REQUIRE(r.changes.size() == 2);
  // mod read bucket's B,64 INT32 through a Cast to INT64: it reads bucket itself, the Cast has
  // no other reader and goes; the result goes back to INT64 for `use`.
  CHECK(names(r.graph) ==
        std::vector<std::string>{"ge_cast0", "ge", "bucket", "mod", "mod_cast_out", "use"});
  CHECK(r.graph.source_ref(*r.graph.find("mod"), 0) == "bucket");
  CHECK(op_named(r.graph, "mod").text.input_dtypes == "INT32;INT32");
  CHECK(*op_named(r.graph, "use").after == std::vector<std::string>{"mod_cast_out", "ge"});
  const double before = us(test::op("FloorMod", "8,64;1", "INT64;INT64")) +
                        us(op_with_outputs("Cast", "8,64", "INT32", "8,64", "INT64"));
  const double after = us(test::op("FloorMod", "8,64;1", "INT32;INT32")) +
                       us(op_with_outputs("Cast", "8,64", "INT32", "8,64", "INT64"));
  const double ge_gain =
      us(op_with_outputs("GreaterEqual", "8,4000;1", "INT64;INT64", "", "BOOL")) -
      us(op_with_outputs("Cast", "8,4000", "INT64", "8,4000", "INT32")) -
      us(op_with_outputs("GreaterEqual", "8,4000;1", "INT32;INT32", "", "BOOL"));
  CHECK(graph_us(g, 8) - graph_us(r.graph, 8) == Approx(before - after + ge_gain).epsilon(1e-12));
}

TEST_CASE("int64_narrow refuses a value_range beyond int32 and rejects a malformed one",
          "[passes]") {
  std::string wide = kInt64;
  wide.replace(wide.find("-1,399"), 6, "0,4294967296");
  CHECK(npusim::int64_narrow(graph_from(wide)).changes.empty());
  std::string bad = kInt64;
  bad.replace(bad.find("-1,399"), 6, "399,-1");
  CHECK_THROWS_WITH(npusim::int64_narrow(graph_from(bad)),
                    Catch::Contains(":4:1: error:") && Catch::Contains("value_range"));
}

TEST_CASE("topk_valid_length gives a padded TopK the valid length of its rows", "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "topk"
[[graph.op]]
name = "topk"
type = "TopK"
shapes = "B,4000;1"
dtypes = "FLOAT16;INT32"
attrs = { k = 50, valid_fraction = 0.25 }
)");
  const PassResult r = npusim::topk_valid_length(g);
  REQUIRE(r.changes.size() == 1);
  const GraphOp& t = op_named(r.graph, "topk");
  bool found = false;
  for (const auto& [k, v] : t.text.attrs) found = found || (k == "valid_length" && v == "1000");
  CHECK(found);
  const double before = us(test::op("TopK", "20,4000;1", "FLOAT16;INT32", {{"k", "50"}}));
  const double after =
      us(test::op("TopK", "20,4000;1", "FLOAT16;INT32", {{"k", "50"}, {"valid_length", "1000"}}));
  CHECK(graph_us(g, 20) - graph_us(r.graph, 20) == Approx(before - after).epsilon(1e-12));
  CHECK(after < before);
}

TEST_CASE("fuse_masked_gather replaces the AI CPU Where, the mask and its Mul by one Gather",
          "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "masked gather"
[[graph.op]]
name = "valid"
type = "GreaterEqual"
shapes = "B,4000;1"
dtypes = "INT64;INT64"
output_dtypes = "BOOL"
after = []
[[graph.op]]
name = "clean"
type = "Where"
shapes = "B,4000;B,4000;1"
dtypes = "BOOL;INT64;INT64"
output_shapes = "B,4000"
output_dtypes = "INT64"
[[graph.op]]
name = "emb"
type = "GatherV2"
shapes = "400,50;B,4000;1"
dtypes = "FLOAT16;INT64;INT32"
output_shapes = "B,4000,50"
output_dtypes = "FLOAT16"
[[graph.op]]
name = "mask"
type = "Cast"
shapes = "B,4000,1"
dtypes = "BOOL"
output_shapes = "B,4000,1"
output_dtypes = "FLOAT16"
after = ["valid"]
[[graph.op]]
name = "masked"
type = "Mul"
shapes = "B,4000,50;B,4000,1"
dtypes = "FLOAT16;FLOAT16"
after = ["emb", "mask"]
[[graph.op]]
name = "pool"
type = "ReduceSum"
shapes = "B,4000,50"
dtypes = "FLOAT16"
output_shapes = "B,50"
output_dtypes = "FLOAT16"
attrs = { axes = "1" }
)");
  const PassResult r = npusim::fuse_masked_gather(g);
  REQUIRE(r.changes.size() == 1);
  CHECK(names(r.graph) == std::vector<std::string>{"emb", "pool"});
  CHECK(op_named(r.graph, "emb").after->empty());
  CHECK(r.graph.source_ref(*r.graph.find("pool"), 0) == "emb");
  CHECK(r.changes[0].ops == std::vector<std::string>{"emb", "clean", "masked", "mask", "valid"});
  const double removed =
      us(op_with_outputs("GreaterEqual", "4,4000;1", "INT64;INT64", "", "BOOL")) +
      us(op_with_outputs("Where", "4,4000;4,4000;1", "BOOL;INT64;INT64", "4,4000", "INT64")) +
      us(op_with_outputs("Cast", "4,4000,1", "BOOL", "4,4000,1", "FLOAT16")) +
      us(test::op("Mul", "4,4000,50;4,4000,1", "FLOAT16;FLOAT16"));
  CHECK(graph_us(g, 4) - graph_us(r.graph, 4) == Approx(removed).epsilon(1e-12));
}

TEST_CASE("aicpu_to_host moves an AI CPU op fed from the host to the host, first in the graph",
          "[passes]") {
  const Graph g = graph_from(R"(
[graph]
name = "host"
[[graph.op]]
name = "x"
type = "Relu"
shapes = "B,64"
dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "bucket"
type = "Bucketize"
shapes = "B,64"
dtypes = "INT64"
output_dtypes = "INT32"
after = []
[[graph.op]]
name = "use"
type = "Cast"
shapes = "B,64"
dtypes = "INT32"
output_dtypes = "FLOAT16"
[[graph.op]]
name = "late"
type = "Bucketize"
shapes = "B,64"
dtypes = "INT64"
output_dtypes = "INT32"
after = ["x"]
[[graph.op]]
name = "second"
type = "Bucketize"
shapes = "B,32"
dtypes = "INT64"
output_dtypes = "INT32"
after = []
)");
  const PassResult r = npusim::aicpu_to_host(g);
  REQUIRE(r.changes.size() == 2);  // `late` reads a device op's output
  CHECK(names(r.graph) == std::vector<std::string>{"bucket", "second", "x", "use", "late"});
  CHECK(op_named(r.graph, "second").text.placement == "host");
  CHECK(op_named(r.graph, "bucket").text.placement == "host");
  CHECK(source_of(r.graph, "use", 0) == "bucket");
  const double aicpu = us(op_with_outputs("Bucketize", "16,64", "INT64", "", "INT32"));
  const double host = us(op_with_outputs("Bucketize", "16,64", "INT64", "", "INT32", {}, "host"));
  const double aicpu2 = us(op_with_outputs("Bucketize", "16,32", "INT64", "", "INT32"));
  const double host2 = us(op_with_outputs("Bucketize", "16,32", "INT64", "", "INT32", {}, "host"));
  CHECK(graph_us(g, 16) - graph_us(r.graph, 16) ==
        Approx(aicpu - host + aicpu2 - host2).epsilon(1e-12));
}

TEST_CASE("an unknown pass name is refused with the list of valid ones", "[passes]") {
  const Graph g = graph_from(kTileBmm);
  CHECK_THROWS_WITH(npusim::apply_passes(g, {"drop_tile"}),
                    Catch::Contains("unknown pass 'drop_tile'") &&
                        Catch::Contains("drop_redundant_tile, tile_concat, fold_bmm_batch"));
}

TEST_CASE("a pass that finds nothing returns the graph unchanged", "[passes]") {
  const Graph g = graph_from(kInt64);
  for (const npusim::PassInfo& p : npusim::graph_passes()) {
    if (std::string(p.name) == "int64_narrow" || std::string(p.name) == "aicpu_to_host") continue;
    const PassResult r = p.run(g, {});
    CHECK(r.changes.empty());
    CHECK(names(r.graph) == names(g));
  }
}

TEST_CASE("a graph written as TOML loads back with the same ops", "[passes][graph]") {
  const Graph g = graph_from(R"(
[graph]
name = "round \"trip\""
[[graph.op]]
name = "a"
type = "GatherV2"
shapes = "400,50;B*2,4000;1"
dtypes = "FLOAT16;INT64;INT32"
formats = "ND;ND;ND"
output_shapes = "B*2,4000,50"
output_dtypes = "FLOAT16"
output_formats = "ND"
placement = "vector"
stream = 3
attrs = { index_dup_ratio = 0.3, note = "x, y", flag = true, k = 7, "odd.key" = "1e5" }
[[graph.op]]
name = "b"
type = "Relu"
shapes = "B,4000,50"
dtypes = "FLOAT16"
duration_us = 35.25
[[graph.op]]
name = "c"
type = "Relu"
shapes = "B,4000,50"
dtypes = "FLOAT16"
after = ["a", "b"]
)");
  const Graph back = graph_from(npusim::graph_to_toml(g));
  CHECK(back.name() == g.name());
  REQUIRE(back.size() == g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    const GraphOp& x = g.ops()[i];
    const GraphOp& y = back.ops()[i];
    CHECK(y.text.name == x.text.name);
    CHECK(y.text.type == x.text.type);
    CHECK(y.text.input_shapes == x.text.input_shapes);
    CHECK(y.text.input_dtypes == x.text.input_dtypes);
    CHECK(y.text.input_formats == x.text.input_formats);
    CHECK(y.text.output_shapes == x.text.output_shapes);
    CHECK(y.text.output_dtypes == x.text.output_dtypes);
    CHECK(y.text.output_formats == x.text.output_formats);
    CHECK(y.text.placement == x.text.placement);
    CHECK(y.text.attrs == x.text.attrs);
    CHECK(y.after == x.after);
    CHECK(y.stream == x.stream);
    CHECK(y.duration_us == x.duration_us);
  }
}
