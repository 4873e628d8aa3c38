#include "profile/graph_export.h"

#include <catch2/catch.hpp>

#include "model/graph.h"
#include "profile/discover.h"
#include "test_files.h"

using namespace npusim::profile;
using npusim::InputError;

namespace {

ProfileSource torch_rank0() {
  const auto d = discover_profiles(npusim::test::data_dir() +
                                   "/profiles/torch_cann83/rank_0_ascend_pt");
  REQUIRE(d.profiles.size() == 1);
  return d.profiles.front();
}

}  // namespace

TEST_CASE("a step exports as a graph the model's graph loader accepts", "[graph]") {
  const auto g = graph_from_profile(torch_rank0(), 13);
  CHECK(g.step == 13);
  CHECK(g.steps_found == std::vector<std::int64_t>{12, 13});
  CHECK(g.ops == 4);
  CHECK(g.dropped_communication == 0);
  npusim::test::TempDir d;
  const auto file = d.write("graph.toml", g.toml);
  const npusim::Graph graph = npusim::load_graph_file(file);
  REQUIRE(graph.size() == 4);
  // Start-time order: MatMulV3 (s2, t=1000), FA (s3, t=1050), Add (s2, 1102), Add (s2, 1113).
  CHECK(graph.ops()[0].text.type == "MatMulV3");
  CHECK(graph.ops()[1].text.type == "FlashAttentionScore");
  CHECK(graph.ops()[1].stream == 3);
  CHECK(graph.ops()[1].text.placement == "mix");
  CHECK(*graph.ops()[0].duration_us == Approx(101.5));
  // Same-name ops are de-duplicated.
  CHECK(graph.ops()[2].text.name == "aclnnAdd_AddAiCore_Add");
  CHECK(graph.ops()[3].text.name == "aclnnAdd_AddAiCore_Add#2");
  // Dependencies: the Adds follow the previous op of stream 2; FA is the first op of stream 3
  // and no op had ended when it started (MatMulV3 ends at 1101.5), so it is a root.
  CHECK(*graph.ops()[0].after == std::vector<std::string>{});
  CHECK(*graph.ops()[1].after == std::vector<std::string>{});
  CHECK(*graph.ops()[2].after == std::vector<std::string>{"aclnnMatmul_MatMulV3Common_MatMulV3"});
  CHECK(*graph.ops()[3].after == std::vector<std::string>{"aclnnAdd_AddAiCore_Add"});
}

TEST_CASE("the first op of a stream follows the op that ended last before it started",
          "[graph]") {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/msprof_crafted");
  const auto g = graph_from_profile(d.profiles.front(), std::nullopt);
  npusim::test::TempDir t;
  const npusim::Graph graph = npusim::load_graph_file(t.write("g.toml", g.toml));
  CHECK(g.dropped_communication == 1);
  CHECK(graph.size() == 12);
  // MatMulV2 #2 is the first op of stream 7 (t = 1830); the last op to end before it is the
  // Mul of stream 5 that ended at 1820.
  const auto i = graph.find("aclnnMatmul_MatMulV2_1#2");
  REQUIRE(i.has_value());
  CHECK(graph.ops()[*i].stream == 7);
  CHECK(*graph.ops()[*i].after == std::vector<std::string>{"aclnnMul_MulAiCore_Mul"});
  CHECK_THAT(g.toml, Catch::Contains("# dropped: 1 communication tasks"));
}

TEST_CASE("the default step is the last one", "[graph]") {
  CHECK(graph_from_profile(torch_rank0(), std::nullopt).step == 13);
  const auto g12 = graph_from_profile(torch_rank0(), 12);
  CHECK(g12.ops == 2);
  CHECK(g12.dropped_communication == 1);
}

TEST_CASE("a step that is not in the profile names the steps found", "[graph]") {
  try {
    (void)graph_from_profile(torch_rank0(), 7);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.detail() == "step 7 is not in the profile; steps found: 12, 13");
  }
}

TEST_CASE("graph from-profile --step on a file without a step column is an error", "[graph]") {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/msprof_crafted");
  CHECK_THROWS_AS(graph_from_profile(d.profiles.front(), 1), InputError);
}

TEST_CASE("ops without shapes are written with empty shapes and still load", "[graph]") {
  const auto d = discover_profiles(npusim::test::data_dir() +
                                   "/profiles/cann9_block_num/op_summary_20261001000000.csv");
  const auto g = graph_from_profile(d.profiles.front(), std::nullopt);
  CHECK(g.ops == 2);  // the DSA task is dropped
  CHECK(g.dropped_other == 1);
  npusim::test::TempDir t;
  const npusim::Graph graph = npusim::load_graph_file(t.write("g.toml", g.toml));
  CHECK(graph.size() == 2);
}

TEST_CASE("a step of Level0 rows without op types has nothing to simulate", "[graph]") {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/torch_level0");
  try {
    (void)graph_from_profile(d.profiles.front(), std::nullopt);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.detail(), Catch::Contains("no compute op with an op type") &&
                               Catch::Contains("2 without type"));
  }
}

TEST_CASE("TOML strings are escaped", "[graph]") {
  CHECK(npusim::toml_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(npusim::toml_string("x\ny") == "\"x\\ny\"");
}
