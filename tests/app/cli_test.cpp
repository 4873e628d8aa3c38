// The predict subcommand from the outside: exit codes, JSON keys, bad input on the command line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

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
