// examples/sweep run exactly as its README says, on a fleet of two hosts
// that are network namespaces with their own sshd and address
// (support/netns_fleet.h), named node0 and node1 by an ssh configuration
// (RUNNER_SSH_CONFIG, as ~/.ssh/config would) and reached as a user of
// their own whose home both share. The benchmark is the example's python3
// program; its numbers are whatever it measured, so only their presence and
// sign are checked, and where each job ran.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "support/example.h"
#include "support/netns_fleet.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;

constexpr const char* k_python = "/usr/bin/python3";

// The `<title>` of each point of `svg` whose text starts with `series`.
std::vector<std::string> point_titles(const std::string& svg, const std::string& series) {
  std::vector<std::string> titles;
  std::regex title("<title>(" + series + ", [^<]*)</title>");
  for (std::sregex_iterator at(svg.begin(), svg.end(), title), end; at != end; ++at)
    titles.push_back((*at)[1]);
  return titles;
}

// The <svg> elements of an HTML page, in order.
std::vector<std::string> svg_elements(const std::string& html) {
  std::vector<std::string> found;
  for (std::size_t at = html.find("<svg class=\"plot\""); at != std::string::npos;
       at = html.find("<svg class=\"plot\"", at + 1))
    found.push_back(html.substr(at, html.find("</svg>", at) - at));
  return found;
}

// Walks the journal in order and returns a message for each job that
// started on a slot another job still held; empty when none did.
std::string slots_shared(const std::string& journal) {
  std::map<std::string, long> holder;  // slot -> job running on it
  std::map<long, std::string> slot_of;
  std::string shared;
  std::istringstream lines(journal);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    std::string event = record["event"];
    if (event == "job_start") {
      std::string slot = record["slot"];
      long job = record["job"];
      if (holder.count(slot))
        shared += "#" + std::to_string(job) + " started on " + slot + " held by #" +
                  std::to_string(holder[slot]) + "\n";
      holder[slot] = job;
      slot_of[job] = slot;
    } else if (event == "job_end") {
      holder.erase(slot_of[record["job"].get<long>()]);
    }
  }
  return shared;
}

struct SweepExample : ::testing::Test {
  testing::TempDir dir;
  std::unique_ptr<testing::NetnsFleet> fleet;
  std::unique_ptr<testing::RemoteUser> user;
  testing::Example example{"sweep"};
};

TEST_F(SweepExample, QueueResultsPlotAndSpeedupOnTwoNodesAsTheReadmeSays) {
  if (::access(k_python, X_OK) != 0) {
    if (testing::sshd_required()) FAIL() << "no " << k_python << ", and CI=true requires it";
    GTEST_SKIP() << "no " << k_python;
  }
  std::string why_not;
  fleet = testing::NetnsFleet::start(dir, 2, why_not);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  user = testing::RemoteUser::create("/bin/sh");
  RUNNER_REQUIRE_REMOTE_USER(user, "/bin/sh");
  std::map<std::string, std::string> env = fleet->admit(*user);

  std::string work = example.copy_into(dir);
  std::vector<std::string> commands = example.commands();
  ASSERT_EQ(commands, (std::vector<std::string>{
                          "runner push sweep.py",
                          "runner queue",
                          "runner results",
                          "runner report --plot throughput:batch:model,fusion "
                          "--plot 'throughput/fusion=off:batch:model'",
                      }));
  std::vector<ProcessResult> ran = example.run_all(commands, work, env);
  ASSERT_EQ(ran.size(), commands.size());

  // push: the program reached both nodes (which share the user's home).
  EXPECT_NE(ran[0].out.find("pushed to 2 of 2 hosts"), std::string::npos) << ran[0].out;
  EXPECT_NE(ran[1].err.find("runner: 16 jobs: 16 succeeded, 0 failed"), std::string::npos)
      << ran[1].out << ran[1].err;

  // results: a row per (model, batch, fusion), each once, its CSV back.
  const std::string& table = ran[2].out;
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "id,batch,fusion,model,host,slot,outcome,exit,duration_s,attempts,samples,"
            "cpu_seconds,throughput");
  std::set<std::string> configurations, hosts, slots;
  int rows = 0;
  for (auto& row : testing::csv_rows(table)) {
    ++rows;
    EXPECT_EQ(row.count("<malformed>"), 0u) << row["<malformed>"];
    std::string configuration = row["model"] + "-bs" + row["batch"] + "-fusion-" + row["fusion"];
    EXPECT_TRUE(configurations.insert(configuration).second) << configuration << " twice";
    EXPECT_EQ(row["outcome"], "succeeded") << table;
    EXPECT_EQ(row["attempts"], "1") << table;
    EXPECT_GT(std::stod(row["throughput"]), 0) << table;
    std::string gpu = row["slot"].substr(row["slot"].rfind('=') + 1);
    EXPECT_EQ(row["slot"], row["host"] + " gpu=" + gpu) << table;
    hosts.insert(row["host"]);
    slots.insert(row["slot"]);
    std::vector<std::map<std::string, std::string>> csv = testing::csv_rows(
        dir.read("sweep/queue.runner/outputs/" + row["id"] + "/results/" + configuration + ".csv"));
    EXPECT_EQ(csv.size(), 1u) << configuration << ": its CSV did not come back";
    if (!csv.empty()) {
      EXPECT_EQ(csv[0]["throughput"], row["throughput"]) << configuration;
    }
    // The job saw its slot's GPU.
    std::string log = dir.read("sweep/queue.runner/logs/" + row["id"] + ".log");
    EXPECT_NE(log.find("models on device " + gpu), std::string::npos) << row["slot"] << ": " << log;
  }
  EXPECT_EQ(rows, 16) << table;
  std::set<std::string> expected;
  for (const char* model : {"mlp", "cnn"})
    for (const char* batch : {"8", "16", "32", "64"})
      for (const char* fusion : {"off", "on"})
        expected.insert(std::string(model) + "-bs" + batch + "-fusion-" + fusion);
  EXPECT_EQ(configurations, expected);
  EXPECT_EQ(hosts, (std::set<std::string>{"node0", "node1"})) << table;
  EXPECT_EQ(slots,
            (std::set<std::string>{"node0 gpu=0", "node0 gpu=1", "node1 gpu=0", "node1 gpu=1"}))
      << table;
  EXPECT_EQ(slots_shared(dir.read("sweep/queue.runner/journal.jsonl")), "");

  // report: a line per (model, fusion), and the speedup per model.
  EXPECT_EQ(ran[3].err, "");
  std::string page = dir.read("sweep/queue.runner/report.html");
  EXPECT_NE(ran[3].out.find("queue.runner/report.html"), std::string::npos) << ran[3].out;
  std::vector<std::string> plots = svg_elements(page);
  ASSERT_EQ(plots.size(), 2u) << page;
  EXPECT_EQ(testing::count(plots[0], "<path class=\"series\""), 4) << plots[0];
  for (const char* model : {"mlp", "cnn"}) {
    for (const char* fusion : {"off", "on"}) {
      std::string series = std::string("model=") + model + ", fusion=" + fusion;
      EXPECT_EQ(testing::count(plots[0], "data-series=\"" + series + "\""), 1) << series;
      EXPECT_EQ(point_titles(plots[0], series).size(), 4u) << series;
    }
  }
  EXPECT_NE(plots[1].find("throughput relative to fusion=off by batch, one line per model"),
            std::string::npos)
      << plots[1];
  EXPECT_EQ(testing::count(plots[1], "<path class=\"series\""), 2) << plots[1];
  EXPECT_EQ(testing::count(plots[1], "<line class=\"reference\""), 1) << plots[1];
  for (const char* model : {"mlp", "cnn"}) {
    std::vector<std::string> speedups = point_titles(plots[1], std::string("model=") + model);
    ASSERT_EQ(speedups.size(), 4u) << model << ":\n" << plots[1];
    for (const std::string& speedup : speedups)
      EXPECT_GT(std::stod(speedup.substr(speedup.rfind(": ") + 2)), 0) << speedup;
  }
}

}  // namespace
}  // namespace runner
