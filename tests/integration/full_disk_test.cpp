// A full disk under a running runner, for real: the state directory is a
// small tmpfs that the test fills while jobs run and frees again. Every
// failed write is said, no job starts while the journal cannot be written,
// no record is torn, and every log is whole or named as incomplete.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "support/process.h"
#include "support/small_tmpfs.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

constexpr int k_jobs = 30;
constexpr int k_lines = 300;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What job <<i>> prints.
std::string expected_output(int i) {
  std::string text;
  for (int n = 1; n <= k_lines; ++n)
    text += "line " + std::to_string(i) + " " + std::to_string(n) + "\n";
  return text;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FullDisk, WritesThatFailAreSaidJobsWaitForTheJournalAndNothingIsTorn) {
  TempDir dir;
  testing::SmallTmpfs fs(dir.file("state"), "2m");
  RUNNER_REQUIRE_TMPFS(fs);
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  std::string starts = dir.file("starts");
  std::string list;
  for (int i = 0; i < k_jobs; ++i) list += (i ? ", " : "") + std::to_string(i);
  dir.write("queue.yaml", "- command: echo <<i>> $(date +%s%N) >> " + starts +
                              "; sleep 0.25; printf 'line <<i>> %s\\n' $(seq 1 " +
                              std::to_string(k_lines) + ")\n  i: [" + list + "]\n");
  Process run(testing::runner_spec({"queue", "--state-dir", fs.path()}, dir.path()));
  testing::wait_until([&] { return count_of(dir.read("state/journal.jsonl"), "job_end") >= 4; },
                      20s);
  ASSERT_GE(count_of(dir.read("state/journal.jsonl"), "job_end"), 4u) << run.peek_err();

  ASSERT_TRUE(fs.fill());
  ASSERT_TRUE(run.wait_for_output("cannot write to the journal", 20s)) << run.peek_err();
  long long full_seen = now_ns();
  std::this_thread::sleep_for(2s);  // jobs under way end; none may start
  long long freed = now_ns();
  fs.free_space();
  ProcessResult r = run.wait();

  // No job started while the journal could not be written, and every job ran.
  std::istringstream start_lines(dir.read("starts"));
  std::set<int> started;
  for (int i; start_lines >> i;) {
    long long at = 0;
    start_lines >> at;
    started.insert(i);
    EXPECT_FALSE(at > full_seen && at < freed) << "job " << i << " started on a full disk";
  }
  EXPECT_EQ(started.size(), std::size_t{k_jobs});

  // The journal parses line by line; no record is glued to another.
  std::istringstream lines(dir.read("state/journal.jsonl"));
  std::map<std::uint64_t, int> index_of;  // job id -> <<i>>
  std::map<std::uint64_t, bool> succeeded;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_EQ(count_of(line, "{\"event\""), 1u) << line;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(record.is_object()) << line;
    if (record["event"] == "job_start")
      index_of[record["job"]] = std::stoi(record["params"]["i"].get<std::string>());
    if (record["event"] == "job_end") succeeded[record["job"]] = record["exit"] == 0;
  }
  EXPECT_EQ(index_of.size(), std::size_t{k_jobs}) << r.err;
  EXPECT_EQ(succeeded.size(), std::size_t{k_jobs}) << r.err;

  // Every log is whole, or the summary names it as incomplete.
  std::size_t section = r.err.find("incomplete job logs");
  std::string named = section == std::string::npos ? "" : r.err.substr(section);
  int incomplete = 0;
  for (const auto& [job, i] : index_of) {
    std::string log = dir.read("state/logs/" + std::to_string(job) + ".log");
    if (log == expected_output(i)) continue;
    ++incomplete;
    EXPECT_NE(named.find("#" + std::to_string(job) + " "), std::string::npos)
        << "job #" << job << " has a cut log that the summary does not name:\n"
        << r.err;
  }
  if (incomplete > 0) {
    EXPECT_EQ(r.status, 1) << "logs were lost, yet the run succeeded";
  }
  std::cerr << "full disk: " << incomplete << " incomplete logs; exit " << r.status << "\n";
}

}  // namespace
}  // namespace runner
