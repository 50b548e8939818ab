// `copse trace synth` and `copse replay` as users run them (the binary).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/paths.h"
#include "tests/support/process.h"

namespace copse::e2e {
namespace cli_test {

using nlohmann::json;
namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ReplayCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("copse-replay-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Example(const std::string& name) const {
    return std::string(COPSE_SOURCE_DIR) + "/deploy/examples/traces/" + name;
  }
  fs::path dir_;
};

TEST_F(ReplayCliTest, SynthThenReplayTwoConfigs) {
  const std::string trace = (dir_ / "t.jsonl").string();
  CommandResult synth =
      RunCommand({COPSE_BINARY, "trace", "synth", "--out", trace, "--nodes", "8", "--topology",
                  "rack=4", "--duration", "30m", "--jobs-per-hour", "40", "--seed", "3"});
  ASSERT_EQ(synth.exit_code, 0) << synth.out;
  const std::string json_path = (dir_ / "r.json").string();
  const std::string html_path = (dir_ / "r.html").string();
  CommandResult replay =
      RunCommand({COPSE_BINARY, "replay", trace, "--config", Example("pack.yaml"), "--config",
                  Example("spread.yaml"), "--json", json_path, "--report", html_path, "--quiet"},
                 {}, std::chrono::seconds(300));
  ASSERT_EQ(replay.exit_code, 0) << replay.out;
  EXPECT_NE(replay.out.find("pack.yaml"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("decisions that differ"), std::string::npos) << replay.out;
  const json report = json::parse(ReadAll(json_path));
  ASSERT_EQ(report["configs"].size(), 2u);
  EXPECT_EQ(report["configs"][0]["name"], "pack.yaml");
  EXPECT_EQ(report["configs"][1]["name"], "spread.yaml");
  for (const json& c : report["configs"]) {
    EXPECT_GT(c["pods"].get<int64_t>(), 0);
    EXPECT_EQ(c["pods"], report["configs"][0]["pods"]);  // one trace
    EXPECT_EQ(c["gangs_partial"], 0);
    EXPECT_EQ(c["max_nodes_over_allocatable"], 0);
  }
  const std::string html = ReadAll(html_path);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("spread.yaml"), std::string::npos);
}

TEST_F(ReplayCliTest, BadInputNamesTheFlagOrLine) {
  CommandResult no_config = RunCommand({COPSE_BINARY, "replay", Example("small.jsonl")});
  EXPECT_EQ(no_config.exit_code, 2);
  EXPECT_NE(no_config.out.find("--config"), std::string::npos) << no_config.out;

  const std::string bad = (dir_ / "bad.jsonl").string();
  std::ofstream(bad) << "{\"format\":\"copse-trace\",\"version\":9}\n";
  CommandResult bad_trace =
      RunCommand({COPSE_BINARY, "replay", bad, "--config", Example("pack.yaml")});
  EXPECT_EQ(bad_trace.exit_code, 2);
  EXPECT_NE(bad_trace.out.find("trace line 1: header version"), std::string::npos) << bad_trace.out;

  CommandResult bad_synth = RunCommand(
      {COPSE_BINARY, "trace", "synth", "--out", (dir_ / "x.jsonl").string(), "--nodes", "0"});
  EXPECT_EQ(bad_synth.exit_code, 2);
  EXPECT_NE(bad_synth.out.find("--nodes"), std::string::npos) << bad_synth.out;
  EXPECT_FALSE(fs::exists(dir_ / "x.jsonl"));
}

TEST_F(ReplayCliTest, TheShippedExampleTraceParsesAndReplays) {
  CommandResult replay = RunCommand(
      {COPSE_BINARY, "replay", Example("small.jsonl"), "--config", Example("pack.yaml"), "--quiet"},
      {}, std::chrono::seconds(300));
  ASSERT_EQ(replay.exit_code, 0) << replay.out;
  EXPECT_NE(replay.out.find("pack.yaml"), std::string::npos);
}

}  // namespace cli_test
}  // namespace copse::e2e
