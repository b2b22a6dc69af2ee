// `outputs:` with the real binary on local slots: each job's files brought
// back into its own folder, a missing one said, the host's copies removed
// with outputs_cleanup, and `runner results` reading their numbers.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

TEST(Outputs, EachJobsFilesComeBackIntoItsFolderAndFeedTheResults) {
  TempDir dir;
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  std::string work = dir.file("work");
  dir.write("queue.yaml",
            "- command: \"mkdir -p " + work + "/out-<<b>> && cd " + work +
                " && echo '{\\\"throughput\\\": <<b>>0}' > out-<<b>>/r.json && echo log > "
                "out-<<b>>/run.log\"\n"
                "  outputs: " + work + "/out-<<b>>/r.json work/out-<<b>>/*.log work/none.csv\n"
                "  b: [1, 2]\n"
                "- command: mkdir -p work/keep && echo x > work/keep/k.txt\n"
                "  outputs: work/keep/k.txt\n"
                "  outputs_cleanup: true\n");
  ProcessResult r = testing::run_process(testing::runner_spec({"queue"}, dir.path()));
  ASSERT_EQ(r.status, 0) << r.err;
  // Relative paths are from the login directory: here, the runner's own.
  EXPECT_EQ(dir.read("queue.runner/outputs/1/work/out-1/run.log"), "log\n");
  std::string absolute = "queue.runner/outputs/2" + work + "/out-2/r.json";
  EXPECT_EQ(dir.read(absolute), "{\"throughput\": 20}\n");
  EXPECT_NE(r.err.find("#1: outputs not found on its host: tar: work/none.csv: Cannot stat"),
            std::string::npos)
      << r.err;
  // Brought back, then removed from the host.
  EXPECT_EQ(dir.read("queue.runner/outputs/3/work/keep/k.txt"), "x\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("work/keep/k.txt")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("work/out-1/r.json")));
  std::string journal = dir.read("queue.runner/journal.jsonl");
  EXPECT_EQ(testing::count(journal, "\"event\":\"outputs\""), 3);
  // "x\n", and its SHA-256, as sha256sum computes it.
  std::string digest = testing::sh_output("printf 'x\\n' | sha256sum | cut -c1-64");
  digest.pop_back();
  EXPECT_NE(journal.find("{\"path\":\"work/keep/k.txt\",\"size\":2,\"sha256\":\"" + digest + "\"}"),
            std::string::npos)
      << journal;
  // The report lists it with the same digest.
  ProcessResult report = testing::run_process(
      testing::runner_spec({"report", "-o", dir.file("report.html")}, dir.path()));
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(dir.read("report.html").find("<td>work/keep/k.txt</td><td class=\"num\">2</td>"
                                         "<td class=\"cmd\">" + digest + "</td>"),
            std::string::npos);

  ProcessResult results =
      testing::run_process(testing::runner_spec({"results", "--format", "tsv"}, dir.path()));
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_NE(results.out.find("\tthroughput\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find("\t10\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find("\t20\n"), std::string::npos) << results.out;
}

TEST(Outputs, OutputsDirTakesThemElsewhereAndResultsFindThemThere) {
  TempDir dir;
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("queue.yaml",
            "- command: \"echo '{\\\"score\\\": 7}' > r.json\"\n"
            "  outputs: r.json\n");
  ProcessResult r = testing::run_process(
      testing::runner_spec({"queue", "--outputs-dir", "collected"}, dir.path()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(dir.read("collected/1/r.json"), "{\"score\": 7}\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.runner/outputs/1")));
  // The journal names the folder whole, so results find it from elsewhere.
  EXPECT_NE(dir.read("queue.runner/journal.jsonl").find("\"dir\":\"" + dir.file("collected/1") + "\""),
            std::string::npos);
  ProcessResult results = testing::run_process(testing::runner_spec(
      {"results", "--format", "tsv", "--queue-file", dir.file("queue.yaml")}, "/"));
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_NE(results.out.find("\tscore\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find("\t7\n"), std::string::npos) << results.out;
}

// `runner queue` of `queue` on a local host whose login directory is
// dir/work: dir/shared/r.csv is outside it, dir/work/shared/r.csv an
// unrelated file of the same name below it.
ProcessResult run_from_work(const TempDir& dir, const std::string& queue) {
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("shared/r.csv", "the output\n");
  dir.write("work/shared/r.csv", "unrelated\n");
  dir.write("queue.yaml", queue);
  return testing::run_process(testing::runner_spec(
      {"queue", "--queue-file", dir.file("queue.yaml"), "--hosts-file", dir.file("hosts.yaml")},
      dir.file("work")));
}

TEST(Outputs, APathThatLeavesTheLoginDirectoryIsRefusedAtItsLineBeforeAnythingRuns) {
  TempDir dir;
  ProcessResult r = run_from_work(dir,
                                  "- command: touch ran\n"
                                  "  outputs: r.json ../shared/r.csv\n"
                                  "  outputs_cleanup: true\n");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("queue.yaml:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("../shared/r.csv"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("work/ran")));
  EXPECT_EQ(dir.read("shared/r.csv"), "the output\n");
  EXPECT_EQ(dir.read("work/shared/r.csv"), "unrelated\n");
}

TEST(Outputs, APathThatLeavesTheLoginDirectoryOnceRenderedIsRefusedOnItsHost) {
  TempDir dir;
  dir.write("work/r.json", "{}\n");
  ProcessResult r = run_from_work(dir,
                                  "- command: \"true\"\n"
                                  "  outputs: r.json <<up>>/shared/r.csv\n"
                                  "  outputs_cleanup: true\n"
                                  "  up: [..]\n");
  EXPECT_NE(r.err.find("../shared/r.csv: leaves the login directory"), std::string::npos) << r.err;
  // What stays inside still comes back; nothing else is touched.
  EXPECT_EQ(dir.read("queue.runner/outputs/1/r.json"), "{}\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.runner/outputs/1/shared")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("work/r.json")));
  EXPECT_EQ(dir.read("shared/r.csv"), "the output\n");
  EXPECT_EQ(dir.read("work/shared/r.csv"), "unrelated\n");
}

}  // namespace
}  // namespace runner
