// The shipped GPU benchmark campaign, end to end against a real Docker
// engine on two slots, local or of a loopback sshd host: setup-nodes.yaml builds the image and
// starts a container per GPU, then benchmark.yaml drains its jobs into them. The image is the test
// image with stand-ins for what needs a GPU or a model: `nvidia-smi` and a `python` that writes the
// result file it is asked for. This machine has no NVIDIA runtime either, so a `docker` first on
// PATH drops `--gpus` before Debian's client runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "support/docker_engine.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/sshd.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::DockerEngine;
using testing::ProcessResult;
using testing::ProcessSpec;
using testing::TempDir;

std::string shipped(const std::string& name) {
  std::ifstream in(std::string(RUNNER_SOURCE_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_program(const TempDir& dir, const std::string& name, const std::string& text) {
  std::filesystem::permissions(dir.write(name, text), std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add);
}

class SeedCampaign : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    engine = DockerEngine::shared(why_not);
    RUNNER_REQUIRE_DOCKER_ENGINE(engine, why_not);
    dir.write("leaderboard/Dockerfile", std::string("FROM ") + DockerEngine::k_image +
                                            "\nCOPY python nvidia-smi /usr/local/bin/\n");
    write_program(dir, "leaderboard/nvidia-smi",
                  "#!/bin/sh\necho 'GPU 0: Stand-in GPU (UUID: GPU-0)'\n");
    write_program(
        dir, "leaderboard/python",
        "#!/bin/sh\n"
        "# python scripts/benchmark.py ... --output FILE: writes FILE.\n"
        "while [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n"
        "mkdir -p \"$(dirname \"$out\")\" && echo '{\"tokens_per_second\": 1}' >\"$out\"\n");
    DockerEngine::write_docker_without_gpus(dir);
  }
  void TearDown() override {
    if (engine) (void)engine->docker({"rm", "-f", "leaderboard0", "leaderboard1"});
  }

  // What a job's shell needs: the engine, the `docker` without --gpus first
  // on PATH, and a home with leaderboard/ (the image's build context).
  std::map<std::string, std::string> job_environment() const {
    std::map<std::string, std::string> environment = engine->env();
    environment["PATH"] = dir.file("bin") + ":" + environment["PATH"];
    environment["HOME"] = dir.path();
    return environment;
  }

  // Runs setup-nodes.yaml in broadcast mode, then benchmark.yaml in queue
  // mode, each `spec` with its mode's arguments, and checks what they did.
  void run_campaign(const std::function<ProcessSpec(std::vector<std::string>)>& spec) {
    dir.write("setup.yaml", shipped("setup-nodes.yaml"));
    ProcessResult setup = testing::run_process(spec({"broadcast", "--queue-file", "setup.yaml"}));
    ASSERT_EQ(setup.status, 0) << setup.out << setup.err;
    EXPECT_NE(setup.out.find("GPU 0: Stand-in GPU"), std::string::npos) << setup.out;
    for (const char* container : {"leaderboard0", "leaderboard1"}) {
      ProcessResult running =
          engine->docker({"inspect", "-f", "{{.State.Running}} {{.HostConfig.Init}}", container});
      EXPECT_EQ(running.out, "true true\n") << container << ": " << running.err;
    }

    dir.write("queue.yaml", shipped("benchmark.yaml"));
    ProcessResult campaign = testing::run_process(spec({"queue"}));
    ASSERT_EQ(campaign.status, 0) << campaign.out << campaign.err;
    int results = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("results")))
      results += entry.is_regular_file() ? 1 : 0;
    EXPECT_EQ(results, 24 + 2) << "a result file for each job";
    EXPECT_TRUE(std::filesystem::exists(dir.file("results/lmsys--vicuna-7b-v1.5/code-bs8.json")));
    EXPECT_TRUE(std::filesystem::exists(dir.file("results/lmsys--vicuna-13b-v1.5/chat-bs4.json")));
  }

  TempDir dir;
  DockerEngine* engine = nullptr;
};

TEST_F(SeedCampaign, SetUpTheNodesThenDrainTheBenchmarkIntoTheirContainers) {
  dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1]\n");
  run_campaign([&](std::vector<std::string> args) {
    ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    for (const auto& [name, value] : job_environment()) spec.env[name] = value;
    spec.timeout = std::chrono::minutes(3);
    return spec;
  });
}

TEST_F(SeedCampaign, OverSshWhereTheUserReachesTheEngineThroughDockerHost) {
  testing::LoopbackFleet fleet(dir);
  testing::SshdOptions options;
  for (const auto& [name, value] : job_environment())
    options.session_environment.push_back(name + "=" + value);
  if (!fleet.start(1, options)) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  dir.write("hosts.yaml", "- hostname: " + fleet.name(0) + "\n  gpu: [0, 1]\n");
  run_campaign([&](std::vector<std::string> args) {
    ProcessSpec spec = fleet.runner(std::move(args));
    spec.timeout = std::chrono::minutes(3);
    return spec;
  });
}

}  // namespace
}  // namespace runner
