// `outputs:` brought back onto a full disk, for real: the outputs folder is
// a small tmpfs. What fits is kept, what does not is named with the reason,
// and the run counts the job as having lost outputs (exit status 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runner/state/journal.h"
#include "runner/state/journal_text.h"
#include "support/process.h"
#include "support/small_tmpfs.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

TEST(OutputsFullDisk, WhatFitsIsKeptWhatDoesNotIsNamedAndTheRunFails) {
  TempDir dir;
  testing::SmallTmpfs fs(dir.file("collected"), "1m");
  RUNNER_REQUIRE_TMPFS(fs);
  dir.write("hosts.yaml", "- localhost\n");
  // big.bin (2 MiB) comes first and cannot fit; small.txt after it can.
  dir.write("queue.yaml",
            "- command: head -c 2097152 /dev/zero > big.bin && echo small > small.txt\n"
            "  outputs: big.bin small.txt\n");
  ProcessResult r = testing::run_process(
      testing::runner_spec({"queue", "--no-status", "--outputs-dir", fs.path()}, dir.path()));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(dir.read("collected/1/small.txt"), "small\n") << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("collected/1/big.bin")));
  EXPECT_NE(r.err.find("big.bin: No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lost outputs"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("1 succeeded, 0 failed; wall"), std::string::npos) << r.err;
  // The journal records what came, and what did not.
  bool recorded = false;
  for (auto& record : testing::value_of(read_journal(dir.file("queue.runner/journal.jsonl")))) {
    if (record.value("event", "") != "outputs") continue;
    recorded = true;
    ASSERT_EQ(record["files"].size(), 1u) << record.dump();
    EXPECT_EQ(journal_text(record["files"][0], "path"), "small.txt");
    EXPECT_NE(journal_text(record, "error").find("big.bin"), std::string::npos) << record.dump();
  }
  EXPECT_TRUE(recorded);
}

}  // namespace
}  // namespace runner
