// `npusim graph example-onnx | from-onnx | from-ge` and `[graph] onnx` end to end.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "tests/app/cli_runner.h"

using npusim::test::read_all;
using npusim::test::run_cli;

namespace {

namespace fs = std::filesystem;

const std::string kImportSrc = NPUSIM_SOURCE_DIR;

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("npusim_cli_import_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  [[nodiscard]] std::string operator/(const std::string& f) const { return (path / f).string(); }
};

}  // namespace

TEST_CASE("from-onnx writes a graph that validate and simulate accept", "[cli][import]") {
  const TempDir d;
  auto r = run_cli("graph example-onnx rec -o " + (d / "rec.onnx"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run_cli("graph from-onnx " + (d / "rec.onnx") + " -o " + (d / "rec.toml"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("28 ops from 30 nodes") != std::string::npos);
  CHECK(r.err.find("batch dimension 'batch' is B") != std::string::npos);
  const std::string toml = read_all(d / "rec.toml");
  CHECK(toml.find("type = \"BatchMatMulV2\"") != std::string::npos);
  CHECK(toml.find("shapes = \"B,8,1,32;B,8,32,300\"") != std::string::npos);

  r = run_cli("validate " + (d / "rec.toml"));
  INFO(r.err);
  CHECK(r.exit_code == 0);

  // The default deployment and traffic with the imported model as its graph.
  r = run_cli("simulate default --set graph.onnx=" + (d / "rec.onnx") +
              " --set workload.requests=300 --set workload.warmup_requests=0");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("rec_coarse_ranking on ascend910b3") != std::string::npos);
  CHECK(r.out.find("cand_match") != std::string::npos);
}

TEST_CASE("a scenario's [graph] onnx is read relative to the scenario", "[cli][import]") {
  const TempDir d;
  REQUIRE(run_cli("graph example-onnx mlp -o " + (d / "mlp.onnx")).exit_code == 0);
  std::ofstream(d / "s.toml") << "[scenario]\nname = \"mlp\"\nhw = \"ascend910b3\"\n"
                                 "[graph]\nonnx = \"mlp.onnx\"\nbatch_dim = \"N\"\n"
                                 "[deployment]\nstreams = 1\ngears = [1, 8]\n"
                                 "[workload]\narrival = \"closed\"\nconcurrency = 1\n"
                                 "requests = 50\nbatch_size = 4\n";
  const auto r = run_cli("simulate " + (d / "s.toml"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("mlp on ascend910b3") != std::string::npos);
}

TEST_CASE("from-onnx on a truncated file exits 2 naming it and writes nothing", "[cli][import]") {
  const TempDir d;
  REQUIRE(run_cli("graph example-onnx cnn -o " + (d / "cnn.onnx")).exit_code == 0);
  const std::string bytes = read_all(d / "cnn.onnx");
  std::ofstream(d / "cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() - 7);
  const auto r = run_cli("graph from-onnx " + (d / "cut.onnx") + " -o " + (d / "out.toml"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(d / "cut.onnx") != std::string::npos);
  CHECK(r.err.find("does not parse") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "out.toml"));
}

TEST_CASE("from-onnx rejects a malformed --set-dim and an unknown --batch-dim", "[cli][import]") {
  const TempDir d;
  REQUIRE(run_cli("graph example-onnx mlp -o " + (d / "mlp.onnx")).exit_code == 0);
  auto r = run_cli("graph from-onnx " + (d / "mlp.onnx") + " --set-dim N=0 -o " + (d / "o.toml"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set-dim N=0: expected NAME=N with a positive integer N") !=
        std::string::npos);
  r = run_cli("graph from-onnx " + (d / "mlp.onnx") + " --batch-dim seq -o " + (d / "o.toml"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--batch-dim seq") != std::string::npos);
  r = run_cli("graph from-onnx " + (d / "mlp.onnx") + " --set-dim N=4 -o " + (d / "o.toml"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("fixed shapes") != std::string::npos);
  CHECK(read_all(d / "o.toml").find("shapes = \"4,16,16\"") != std::string::npos);
}

TEST_CASE("the seed's what-if passes apply to the recommendation model as exported",
          "[cli][import][whatif]") {
  const TempDir d;
  REQUIRE(run_cli("graph example-onnx rec -o " + (d / "rec.onnx")).exit_code == 0);
  const auto r = run_cli("whatif default --set graph.onnx=" + (d / "rec.onnx") +
                         " --set workload.requests=1000 --set workload.warmup_requests=100");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // The Tile feeding the broadcasting BatchMatMul, found through the edges with no hints.
  CHECK(r.out.find("drop_redundant_tile") != std::string::npos);
  CHECK(r.out.find("'w_tile'") != std::string::npos);
  CHECK(r.out.find("fold_bmm_batch") != std::string::npos);
  // The SelectV2 ATC makes of the Where, its mask and the mask Mul fold into the Gather.
  CHECK(r.out.find("fuse_masked_gather") != std::string::npos);
  CHECK(r.out.find("'seq_clean'") != std::string::npos);
}
