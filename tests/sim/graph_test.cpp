#include "model/graph.h"

#include <catch2/catch.hpp>
#include <string>

#include "model/error.h"
#include "sim_test_util.h"

using npusim::Graph;
using npusim::InputError;
using npusim::load_graph_file;
using npusim::substitute_batch;

namespace {
const npusim::SourcePos kPos{"g.toml", 3, 1};

std::string graph_error_of(const std::filesystem::path& p) {
  try {
    (void)load_graph_file(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("the batch symbol is replaced in every dimension that mentions it", "[graph]") {
  CHECK(substitute_batch("B,4000;400,1", 8, kPos) == "8,4000;400,1");
  CHECK(substitute_batch("B*8,32;4*B", 3, kPos) == "24,32;12");
  CHECK(substitute_batch("400,50;;1", 5, kPos) == "400,50;;1");  // a scalar stays empty
  CHECK(substitute_batch(" B , 7", 2, kPos) == "2, 7");
}

TEST_CASE("one grammar reads a template dimension: an integer, B, B*k or k*B", "[graph]") {
  using npusim::parse_dim_template;
  CHECK(parse_dim_template("7")->k == 7);
  CHECK_FALSE(parse_dim_template("7")->batch);
  CHECK(parse_dim_template(" B ")->batch);
  CHECK(parse_dim_template("B * 4")->k == 4);
  CHECK(parse_dim_template("4*B")->batch);
  CHECK_FALSE(parse_dim_template("B*0"));
  CHECK_FALSE(parse_dim_template("3*4"));
  CHECK_FALSE(parse_dim_template("2B"));
  CHECK_FALSE(parse_dim_template(""));
}

TEST_CASE("a dimension that is not an integer or a multiple of B is an error at its position",
          "[graph]") {
  try {
    (void)substitute_batch("B+1,4", 2, kPos);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 3);
    CHECK_THAT(e.what(), Catch::Contains("shape dimension 'B+1'"));
  }
  CHECK_THROWS_AS(substitute_batch("B*0", 2, kPos), InputError);
  CHECK_THROWS_AS(substitute_batch("B*B", 2, kPos), InputError);
}

TEST_CASE("ops without `after` follow the previous op and `after = []` starts a new chain",
          "[graph]") {
  const auto p = npusim::test::write_temp("chain.toml", R"(
[graph]
name = "g"
[[graph.op]]
name = "a"
type = "Add"
shapes = "B,16;B,16"
dtypes = "FLOAT16"
[[graph.op]]
name = "b"
type = "Mul"
shapes = "B,16;B,16"
dtypes = "FLOAT16"
[[graph.op]]
name = "c"
type = "Relu"
shapes = "B,16"
dtypes = "FLOAT16"
after = []
[[graph.op]]
name = "d"
type = "Add"
shapes = "B,16;B,16"
dtypes = "FLOAT16"
after = ["c", "a"]
)");
  const Graph g = load_graph_file(p);
  CHECK(g.name() == "g");
  REQUIRE(g.size() == 4);
  CHECK(g.predecessors(0).empty());
  CHECK(g.predecessors(1) == std::vector<std::size_t>{0});
  CHECK(g.predecessors(2).empty());
  CHECK(g.predecessors(3) == std::vector<std::size_t>{0, 2});
  CHECK(g.topo_order() == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(g.batch_dependent(0));
  const npusim::OpDesc d = g.instantiate(0, 8);
  REQUIRE(d.inputs.size() == 2);
  CHECK(d.inputs[0].shape == std::vector<std::int64_t>{8, 16});
}

TEST_CASE("the topological order puts dependencies first even against file order", "[graph]") {
  const auto p = npusim::test::write_temp("reorder.toml", R"(
[graph]
[[graph.op]]
name = "late"
type = "Add"
shapes = "4;4"
dtypes = "FLOAT16"
after = ["early"]
[[graph.op]]
name = "early"
type = "Add"
shapes = "4;4"
dtypes = "FLOAT16"
after = []
)");
  const Graph g = load_graph_file(p);
  CHECK(g.topo_order() == std::vector<std::size_t>{1, 0});
  CHECK_FALSE(g.batch_dependent(0));
  CHECK(g.find("early") == std::optional<std::size_t>{1});
}

TEST_CASE("each bad graph file is rejected at its defect's line with its phrase", "[graph]") {
  using npusim::test::data;
  CHECK_THAT(graph_error_of(data("bad/graph_cycle.toml")),
             Catch::Contains("graph_cycle.toml:8:9") &&
                 Catch::Contains("is on a dependency cycle: a -> b -> a"));
  CHECK_THAT(graph_error_of(data("bad/graph_unknown_after.toml")),
             Catch::Contains("graph_unknown_after.toml:12:9") &&
                 Catch::Contains("'after' names unknown op 'nope'"));
  CHECK_THAT(graph_error_of(data("bad/graph_duplicate_name.toml")),
             Catch::Contains("graph_duplicate_name.toml:8:") &&
                 Catch::Contains("duplicate name (first defined at line 3)"));
  CHECK_THAT(
      graph_error_of(data("bad/graph_bad_shape.toml")),
      Catch::Contains("graph_bad_shape.toml:6:10") && Catch::Contains("shape dimension 'B+1'"));
  CHECK_THAT(graph_error_of(data("bad/graph_bad_placement.toml")),
             Catch::Contains("graph_bad_placement.toml:8:13") &&
                 Catch::Contains("unknown placement 'gpu'"));
  CHECK_THAT(graph_error_of(data("bad/graph_unknown_key.toml")),
             Catch::Contains("graph_unknown_key.toml:8:1") &&
                 Catch::Contains("unknown key 'durations_us'"));
  CHECK_THAT(graph_error_of(data("bad/graph_no_ops.toml")),
             Catch::Contains("graph_no_ops.toml:1:1") && Catch::Contains("[[graph.op]]"));
}
