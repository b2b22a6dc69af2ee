// The real binary given a queue or hosts file of a few lines that would
// name billions of keys or slots (a mapping merged twice at each of dozens
// of levels, one list named by alias in many keys): a prompt error naming
// the file and line, never a hang or an exhausted memory.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;
using testing::TempDir;

// `- &m0 {FIRST}`, then `- &mN {<<: [*mN-1, *mN-1], ...}` for 40 levels.
std::string doubling_merges(const std::string& first) {
  std::string text = "- &m0 {" + first + "}\n";
  for (int i = 1; i <= 40; ++i)
    text += "- &m" + std::to_string(i) + " {<<: [*m" + std::to_string(i - 1) + ", *m" +
            std::to_string(i - 1) + "], k" + std::to_string(i) + ": v}\n";
  return text;
}

// An entry whose product of lists has 100^11 elements.
std::string aliased_product(const std::string& first) {
  std::string text = "- " + first + "\n  a: &values [";
  for (int i = 0; i < 100; ++i) text += (i ? ", " : "") + std::to_string(i);
  text += "]\n";
  for (int i = 0; i < 10; ++i) text += "  k" + std::to_string(i) + ": *values\n";
  return text;
}

struct YamlBombs : ::testing::Test {
  TempDir dir;

  ProcessResult run(const std::string& hosts, const std::string& queue) {
    dir.write("hosts.yaml", hosts);
    dir.write("queue.yaml", queue);
    testing::ProcessSpec spec = testing::runner_spec(
        {"queue", "-H", "hosts.yaml", "-Q", "queue.yaml", "--no-status"}, dir.path());
    spec.timeout = 20s;
    return testing::run_process(spec);
  }
};

TEST_F(YamlBombs, MergesOfMergesInTheQueueAreRefused) {
  ProcessResult r = run("- localhost\n", doubling_merges("command: echo hi"));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("queue.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("merge each mapping once"), std::string::npos) << r.err;
}

TEST_F(YamlBombs, MergesOfMergesInTheHostsAreRefused) {
  ProcessResult r = run(doubling_merges("hostname: localhost"), "- echo hi\n");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("hosts.yaml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("merge each mapping once"), std::string::npos) << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo hi\n");
}

TEST_F(YamlBombs, AHostEntryOfBillionsOfSlotsIsRefused) {
  ProcessResult r = run(aliased_product("hostname: localhost"), "- echo hi\n");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("hosts.yaml:1:3: this entry brings the fleet to more than 100000 slots"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo hi\n");
}

}  // namespace
}  // namespace runner
