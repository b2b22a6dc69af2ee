// examples/leaderboard run exactly as its README says, against a real
// Docker engine (support/docker_engine.h): push the benchmark, build its
// image and start a container per GPU, drain the model x batch queue into
// them, read the results table, remove the containers. The engine has no
// registry, so its offline Debian image is tagged as the Dockerfile's base,
// and this machine has no GPU, so a `docker` first on PATH drops `--gpus`.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "support/docker_engine.h"
#include "support/example.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::DockerEngine;
using testing::ProcessResult;

class LeaderboardExample : public ::testing::Test {
 protected:
  void TearDown() override {
    if (engine) (void)engine->docker({"rm", "-f", "lb0", "lb1"});
  }

  testing::TempDir dir;
  DockerEngine* engine = nullptr;
  testing::Example example{"leaderboard"};
};

TEST_F(LeaderboardExample, PushSetUpQueueResultsTeardownAsTheReadmeSays) {
  std::string why_not;
  engine = DockerEngine::shared(why_not);
  RUNNER_REQUIRE_DOCKER_ENGINE(engine, why_not);
  ProcessResult tagged = engine->docker({"tag", DockerEngine::k_image, "debian:bookworm-slim"});
  ASSERT_EQ(tagged.status, 0) << tagged.err;
  std::map<std::string, std::string> env = engine->env();
  env["PATH"] = DockerEngine::write_docker_without_gpus(dir) + ":" + env["PATH"];

  std::string work = example.copy_into(dir);
  std::vector<std::string> commands = example.commands();
  ASSERT_EQ(commands, (std::vector<std::string>{
                          "runner push bench --to work",
                          "runner broadcast --queue-file setup.yaml",
                          "runner queue",
                          "runner results",
                          "runner broadcast --queue-file teardown.yaml",
                      }));
  std::vector<ProcessResult> ran;
  for (const std::string& command : commands) {
    ran.push_back(example.run(command, work, env));
    ASSERT_EQ(ran.back().status, 0) << command << "\n" << ran.back().out << ran.back().err;
    if (command != commands[1]) continue;
    // setup: a container per GPU, running, with --init.
    for (const char* container : {"lb0", "lb1"}) {
      ProcessResult running =
          engine->docker({"inspect", "-f", "{{.State.Running}} {{.HostConfig.Init}}", container});
      EXPECT_EQ(running.out, "true true\n") << container << ": " << running.err;
    }
  }

  // push: the benchmark's two files, once (both slots are one host).
  EXPECT_NE(ran[0].out.find("2 files sent"), std::string::npos) << ran[0].out << ran[0].err;
  EXPECT_EQ(dir.read("leaderboard/work/bench/bench.sh"), example.file("bench/bench.sh"));

  // queue: six jobs, each on a container of its slot, each result came back.
  EXPECT_EQ(std::regex_search(ran[2].out, std::regex("=== #6 done \\(exit 0\\)")), true)
      << ran[2].out;
  std::set<std::string> rows_seen;
  EXPECT_EQ(ran[3].out.substr(0, ran[3].out.find('\n')),
            "id,batch,model,host,slot,outcome,exit,duration_s,attempts,tokens,seconds,"
            "tokens_per_second");
  int rows = 0;
  for (auto& row : testing::csv_rows(ran[3].out)) {
    ++rows;
    EXPECT_EQ(row.count("<malformed>"), 0u) << row["<malformed>"];
    EXPECT_EQ(row["host"], "localhost") << ran[3].out;
    EXPECT_EQ(row["outcome"], "succeeded") << ran[3].out;
    EXPECT_EQ(row["exit"], "0") << ran[3].out;
    EXPECT_EQ(row["tokens"], std::to_string(std::stoi(row["batch"]) * 64)) << ran[3].out;
    EXPECT_GT(std::stod(row["tokens_per_second"]), 0) << ran[3].out;
    rows_seen.insert(row["model"] + "-bs" + row["batch"]);
    std::string result = work + "/queue.runner/outputs/" + row["id"] + "/results/" + row["model"] +
                         "-bs" + row["batch"] + ".json";
    EXPECT_TRUE(std::filesystem::is_regular_file(result)) << result;
  }
  EXPECT_EQ(rows, 6) << ran[3].out;
  EXPECT_EQ(rows_seen, (std::set<std::string>{"tiny-bs1", "tiny-bs4", "tiny-bs16", "small-bs1",
                                              "small-bs4", "small-bs16"}));

  // teardown: no container left.
  for (const char* container : {"lb0", "lb1"}) {
    ProcessResult inspected = engine->docker({"inspect", container});
    EXPECT_NE(inspected.status, 0) << container << " still exists";
  }
}

}  // namespace
}  // namespace runner
