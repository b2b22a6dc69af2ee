// Services as `runner status` and `runner report` show them, with the real
// binary on local slots: a service whose ready line gives a port, a client
// job that uses it, then the views of the finished run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct ServiceView : ::testing::Test {
  TempDir dir;
  // Unique, so that a leftover of this test is found by its command line.
  std::string marker = "sleep " + std::to_string(600 + getpid() % 500) + ".75";

  void SetUp() override {
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
    dir.write("queue.yaml",
              "- command: echo booting; echo listening on port 4242; exec " + marker + "\n"
              "  service: db\n"
              "  ready_log: 'listening on port (?<port>\\d+)'\n"
              "- echo client talks to <<db.port>>\n");
  }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
};

TEST_F(ServiceView, StatusAndReportShowTheServiceApartFromTheJobs) {
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(testing::live_processes_running(marker), 0);
  EXPECT_NE(dir.read("queue.runner/logs/2.log").find("client talks to 4242"), std::string::npos);

  ProcessResult status = runner({"status"});
  ASSERT_EQ(status.status, 0) << status.err;
  EXPECT_NE(status.out.find("jobs: 1 done (1 succeeded, 0 failed) · 0 running"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("SERVICE  JOB  SLOT"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("db       #1   localhost"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("stopped at "), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("failed: 1 job"), std::string::npos) << status.out;

  nlohmann::json j = nlohmann::json::parse(runner({"status", "--json"}).out);
  ASSERT_EQ(j["services"].size(), 1u) << j.dump(2);
  const nlohmann::json& db = j["services"][0];
  EXPECT_EQ(db["name"], "db");
  EXPECT_EQ(db["state"], "stopped");
  EXPECT_EQ(db["restarts"], 0);
  EXPECT_EQ(db["variables"]["db.port"], "4242");
  EXPECT_FALSE(db["ready_since"].is_null());
  EXPECT_TRUE(db["log"].get<std::string>().ends_with("queue.runner/logs/1.log")) << db["log"];
  EXPECT_NE(dir.read("queue.runner/logs/1.log").find("listening on port 4242"), std::string::npos);

  ProcessResult report = runner({"report", "-o", "-"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("<h2>Services (1)</h2>"), std::string::npos);
  EXPECT_NE(report.out.find("<span class=\"tag ok\">stopped</span>"), std::string::npos);
  EXPECT_NE(report.out.find("<h2>Jobs (1)</h2>"), std::string::npos);
  EXPECT_NE(report.out.find("<h2>Failures (0)</h2>"), std::string::npos);
}

}  // namespace
}  // namespace runner
