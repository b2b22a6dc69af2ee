// `runner results` over the files jobs brought back, with the real binary on
// local slots: a job run again keeps each attempt's files apart and its row
// reads only the last attempt's; a checkpoint too big to hold beside them is
// not read, a big CSV only at its ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct CollectedResults : ::testing::Test {
  TempDir dir;

  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n"); }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
};

TEST_F(CollectedResults, ARetriedJobsRowHasOnlyItsLastAttemptsNumbers) {
  // The first attempt leaves a partial.json and fails; the second writes
  // final.json. partial.json is removed from the host once brought back
  // (the second waits for that: the two run in the same folder).
  dir.write("queue.yaml",
            "- command: >-\n"
            "    if [ -e tried ]; then sleep 1; echo '{\"loss\": 0.5}' > final.json;\n"
            "    else touch tried; echo '{\"loss\": 9, \"step\": 1}' > partial.json; exit 1; fi\n"
            "  retries: 1\n"
            "  outputs: '*.json'\n"
            "  outputs_cleanup: true\n");
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  ProcessResult results = runner({"results"});
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_NE(results.out.find(",attempts,loss\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find(",2,0.5\n"), std::string::npos) << results.out;
  // Each attempt's files in a folder of its own.
  EXPECT_EQ(dir.read("queue.runner/outputs/1/partial.json"), "{\"loss\": 9, \"step\": 1}\n");
  EXPECT_EQ(dir.read("queue.runner/outputs/1.attempt-2/final.json"), "{\"loss\": 0.5}\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.runner/outputs/1/final.json")));
  std::string journal = dir.read("queue.runner/journal.jsonl");
  EXPECT_EQ(testing::count(journal,
                           "\"job\":1,\"attempt\":2,\"dir\":\"queue.runner/outputs/"
                           "1.attempt-2\""),
            1)
      << journal;
}

// A sparse file of `size` bytes: `head`, zeros, then `tail`.
void write_sparse(const std::string& path, const std::string& head, std::uintmax_t size,
                  const std::string& tail) {
  {
    std::ofstream out(path, std::ios::binary);
    out << head;
  }
  std::filesystem::resize_file(path, size - tail.size());
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << tail;
}

TEST_F(CollectedResults, BigCollectedFilesAreNotReadWhole) {
  dir.write("queue.yaml",
            "- command: >-\n"
            "    mkdir -p out && echo '{\"acc\": 0.75}' > out/metrics.json\n"
            "  outputs: out/metrics.json\n");
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  // Beside what came back: a model of 1 GiB, a CSV of 1 GiB whose rows are
  // at its two ends, a JSON of 1 GiB (sparse: they take no disk).
  constexpr std::uintmax_t k_gib = 1024 * 1024 * 1024;
  std::string folder = dir.file("queue.runner/outputs/1/out/");
  write_sparse(folder + "model.bin", "", k_gib, "");
  write_sparse(folder + "curve.csv", "step,loss\n", k_gib, "\n2,0.25\n");
  write_sparse(folder + "state.json", "{\"step\": ", k_gib, "1}");
  // runner results in 512 MiB of address space: a file read whole cannot be.
  testing::ProcessSpec spec = testing::runner_spec({"results"}, dir.path());
  spec.args.insert(spec.args.begin(), {"/bin/sh", "-c", "ulimit -v 524288 && exec \"$@\"", "sh"});
  ProcessResult results = testing::run_process(spec);
  ASSERT_EQ(results.status, 0) << results.err;
  // In path order: curve.csv, then metrics.json.
  EXPECT_NE(results.out.find(",attempts,step,loss,acc\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find(",1,2,0.25,0.75\n"), std::string::npos) << results.out;
  EXPECT_NE(results.err.find("runner: warning: #1: its output is passed over: "), std::string::npos)
      << results.err;
  EXPECT_NE(results.err.find("out/state.json is 1024 MiB, more than the 64 MiB a JSON file is "
                             "read to\n"),
            std::string::npos)
      << results.err;
  EXPECT_EQ(results.err.find("model.bin"), std::string::npos) << results.err;
}

}  // namespace
}  // namespace runner
