// The predict subcommand from the outside: exit codes, JSON keys, bad input on the command line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "tests/app/cli_runner.h"

using npusim::test::run_cli;

TEST_CASE("predict --json prints exactly the documented keys", "[cli][predict]") {
  const auto r = run_cli("predict --hw ascend910b3 --op MatMulV2 --shapes '4096,1024;1024,4096' "
                         "--dtypes BF16 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  CHECK(keys == std::vector<std::string>{"block_dim", "bound", "bytes_in", "bytes_out",
                                         "core_time_us", "critical_path", "cube_efficiency",
                                         "duration_us", "flops", "interval", "pipes"});
  double sum = 0;
  for (const auto& [k, v] : j["critical_path"].items()) sum += v.get<double>();
  CHECK(sum == Approx(j["duration_us"].get<double>()));
  CHECK(j["pipes"].contains("mte2_us"));
  CHECK(j["pipes"].contains("fixpipe_us"));
  CHECK(j["bound"] == "cube");
}

TEST_CASE("predict prints a readable breakdown with a reason", "[cli][predict]") {
  const auto r = run_cli("predict --hw 910b3 --op GatherV2 --shapes '400,50;64,4000;1' "
                         "--dtypes 'FLOAT16;INT64;INT32'");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("critical path") != std::string::npos);
  CHECK(r.out.find("why: ") != std::string::npos);
}

TEST_CASE("predict warns by name about an unknown op type and still answers", "[cli][predict]") {
  const auto r = run_cli("predict --op MyFusedThing --shapes 64,64 --dtypes fp16");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: unknown op type 'MyFusedThing'") != std::string::npos);
}

TEST_CASE("predict rejects bad shapes and dtypes on the command line with exit code 2",
          "[cli][predict][bad]") {
  auto r = run_cli("predict --op Add --shapes '4,0' --dtypes FLOAT16");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "<command line>: error: shape 0 '4,0': dimension 0 must be > 0\n");
  CHECK(r.out.empty());
  r = run_cli("predict --op Add --shapes '4,4;4,4' --dtypes 'FLOAT16;FLOAT16;INT8'");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "<command line>: error: inputs: 2 shapes but 3 dtypes; give one dtype per shape "
                 "(or one for all)\n");
  r = run_cli("predict --op Add --shapes '4294967296,4294967296' --dtypes FLOAT16");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("element count overflows 64 bits") != std::string::npos);
  r = run_cli("predict --op Add --shapes 4,4 --dtypes FLOAT99");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("<command line>: error: unknown dtype 'FLOAT99'") == 0);
  r = run_cli("predict --op Add --shapes 4,4 --dtypes FLOAT16 --cube-cores 99");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--cube-cores 99: expected 1..20 on ascend910b3") != std::string::npos);
  r = run_cli("predict --op Add --shapes 4,4 --dtypes FLOAT16 --hw ascend999");
  CHECK(r.exit_code == 2);
}

TEST_CASE("predict infers outputs by the graph shape rules and refuses attributes that "
          "contradict the inputs",
          "[cli][predict][bad]") {
  // Each of these printed a duration before: the cost models read attributes leniently.
  const std::pair<const char*, const char*> cases[] = {
      {"--op Transpose --shapes 2,3,4 --dtypes FLOAT16 --attr perm=9,1,2",
       "<command line>: error: Transpose: perm axis 9 is out of range for rank 3\n"},
      {"--op Transpose --shapes 2,3,4 --dtypes FLOAT16 --attr perm=0,0,1",
       "<command line>: error: Transpose: perm names axis 0 twice\n"},
      {"--op ConcatD --shapes '16,100;16,100' --dtypes FLOAT16 --attr concat_dim=7",
       "<command line>: error: ConcatD: axis 7 is out of range for rank 2\n"},
      {"--op SoftmaxV2 --shapes 16,16 --dtypes FLOAT16 --attr axes=-9",
       "<command line>: error: SoftmaxV2: axis -9 is out of range for rank 2\n"},
      {"--op Conv2D --shapes '1,3,2,2;64,3,7,7' --dtypes FLOAT16",
       "<command line>: error: Conv2D: the window (7) is larger than spatial axis 2 (2 padded)\n"},
      {"--op Conv2D --shapes '1,3,224,224;64,3,7,7' --dtypes FLOAT16 --attr pads=-9,-9,0,0",
       "<command line>: error: Conv2D: attribute pads: -9 is negative\n"},
      {"--op MatMulV2 --shapes '16,32;16,16' --dtypes FLOAT16",
       "<command line>: error: MatMulV2: K differs: '16,32' has 32, '16,16' has 16\n"},
  };
  for (const auto& [args, err] : cases) {
    INFO(args);
    const auto r = run_cli(std::string("predict ") + args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == err);
    CHECK(r.out.empty());
  }
  // A Tile whose output passes 64 bits of elements: an error, not 4e14 us.
  auto r = run_cli("predict --op Tile --shapes 16,16 --dtypes FLOAT16 "
                   "--attr multiples=1000000000,1000000000");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("element count overflows 64 bits") != std::string::npos);
  // A data-dependent output is inferred as its upper bound, and says so.
  r = run_cli("predict --op NonZero --shapes 1000 --dtypes FLOAT16");
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: NonZero: outputs inferred as an upper bound") == 0);
  // The inferred output is the one given by hand: the same prediction.
  const auto inferred = run_cli("predict --op MatMulV2 --shapes '64,32;32,16' --dtypes FLOAT16 --json");
  const auto given = run_cli("predict --op MatMulV2 --shapes '64,32;32,16' --dtypes FLOAT16 "
                             "--output-shapes 64,16 --output-dtypes FLOAT16 --json");
  CHECK(inferred.exit_code == 0);
  CHECK(inferred.out == given.out);
}

TEST_CASE("floating-point options refuse NaN and infinities", "[cli][bad]") {
  for (const char* v : {"nan", "inf", "-0.5", "1.5", "x"}) {
    INFO(v);
    const auto r =
        run_cli(std::string("predict --op Add --shapes 4,4 --dtypes FLOAT16 --l2-hit-ratio ") + v);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("--l2-hit-ratio") != std::string::npos);
    CHECK(r.out.empty());
  }
  const auto ok = run_cli("predict --op Add --shapes 4,4 --dtypes FLOAT16 --l2-hit-ratio 0.5");
  CHECK(ok.exit_code == 0);
  // Refused while parsing, before the corpus is read.
  const auto ridge = run_cli("cross-validate no_such_corpus.toml --ridge-alpha nan");
  CHECK(ridge.exit_code != 0);
  CHECK(ridge.err.find("--ridge-alpha: 'nan': expected a finite number") != std::string::npos);
}
